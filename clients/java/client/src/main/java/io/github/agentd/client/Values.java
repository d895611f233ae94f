package io.github.agentd.client;

import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.github.agentd.proto.v1.Attribute;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.Message;
import io.github.agentd.proto.v1.Part;
import io.github.agentd.proto.v1.Role;
import io.github.agentd.proto.v1.RoutingDecision;
import io.github.agentd.proto.v1.Signal;
import io.github.agentd.proto.v1.TextPart;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Conversions between plain Java values and the contract's messages, and chunk helpers. */
public final class Values {
  private Values() {}

  /**
   * A JSON-like Java value as a protobuf Value: null, Boolean, Number, String, Map (string keys),
   * Iterable or array, or a Value itself.
   */
  public static Value value(Object v) {
    if (v == null) {
      return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
    }
    if (v instanceof Value value) {
      return value;
    }
    if (v instanceof Boolean b) {
      return Value.newBuilder().setBoolValue(b).build();
    }
    if (v instanceof Number n) {
      return Value.newBuilder().setNumberValue(n.doubleValue()).build();
    }
    if (v instanceof CharSequence s) {
      return Value.newBuilder().setStringValue(s.toString()).build();
    }
    if (v instanceof Map<?, ?> m) {
      return Value.newBuilder().setStructValue(struct(m)).build();
    }
    if (v instanceof Iterable<?> items) {
      ListValue.Builder list = ListValue.newBuilder();
      items.forEach(item -> list.addValues(value(item)));
      return Value.newBuilder().setListValue(list).build();
    }
    if (v instanceof Object[] items) {
      return value(List.of(items));
    }
    throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
  }

  /** A map with string keys as a protobuf Struct. */
  public static Struct struct(Map<?, ?> map) {
    Struct.Builder s = Struct.newBuilder();
    map.forEach((k, v) -> {
      if (!(k instanceof String key)) {
        throw new IllegalArgumentException("a Struct key must be a String, not " + k);
      }
      s.putFields(key, value(v));
    });
    return s.build();
  }

  /** A protobuf Value as plain Java: null, Boolean, Double, String, Map or List. */
  public static Object toJava(Value v) {
    return switch (v.getKindCase()) {
      case NULL_VALUE, KIND_NOT_SET -> null;
      case BOOL_VALUE -> v.getBoolValue();
      case NUMBER_VALUE -> v.getNumberValue();
      case STRING_VALUE -> v.getStringValue();
      case STRUCT_VALUE -> toJava(v.getStructValue());
      case LIST_VALUE -> {
        List<Object> out = new ArrayList<>();
        v.getListValue().getValuesList().forEach(item -> out.add(toJava(item)));
        yield out;
      }
    };
  }

  /** A protobuf Struct as a Map. */
  public static Map<String, Object> toJava(Struct s) {
    Map<String, Object> out = new LinkedHashMap<>();
    s.getFieldsMap().forEach((k, v) -> out.put(k, toJava(v)));
    return out;
  }

  /** An attribute (name, JSON value) of a signal or message. */
  public static Attribute attr(String name, Object value) {
    return Attribute.newBuilder().setName(name).setValue(value(value)).build();
  }

  /** A user message of one text part. */
  public static Message userText(String text) {
    return textMessage(Role.ROLE_USER, text);
  }

  /** An assistant message of one text part. */
  public static Message assistantText(String text) {
    return textMessage(Role.ROLE_ASSISTANT, text);
  }

  /** A system message of one text part. */
  public static Message systemText(String text) {
    return textMessage(Role.ROLE_SYSTEM, text);
  }

  private static Message textMessage(Role role, String text) {
    return Message.newBuilder()
        .setRole(role)
        .addParts(Part.newBuilder().setText(TextPart.newBuilder().setText(text)))
        .build();
  }

  /** The text parts of a message, joined. */
  public static String text(Message m) {
    StringBuilder b = new StringBuilder();
    for (Part p : m.getPartsList()) {
      if (p.hasText()) {
        b.append(p.getText().getText());
      }
    }
    return b.toString();
  }

  /** The text of a signal: its text, or its text content parts joined. */
  public static String text(Signal s) {
    if (!s.getText().isEmpty()) {
      return s.getText();
    }
    StringBuilder b = new StringBuilder();
    s.getPartsList().forEach(p -> {
      if (p.hasText()) {
        b.append(p.getText().getText());
      }
    });
    return b.toString();
  }

  /**
   * The name of a chunk's payload as in the proto's oneof: "start", "text_delta", "tool_call",
   * "finish", ... or "" when none is set.
   */
  public static String kind(Chunk c) {
    var field = c.getOneofFieldDescriptor(oneof(Chunk.getDescriptor(), "payload"));
    return field == null ? "" : field.getName();
  }

  private static com.google.protobuf.Descriptors.OneofDescriptor oneof(
      com.google.protobuf.Descriptors.Descriptor message, String name) {
    return message.getOneofs().stream().filter(o -> o.getName().equals(name)).findFirst().orElseThrow();
  }

  /** Whether a chunk ends its run: finish, error or abort (a tripwire is followed by a finish). */
  public static boolean isLast(Chunk c) {
    return c.hasFinish() || c.hasError() || c.hasAbort();
  }

  /** What a routing decision did: "wake", "deliver", "persist", "discard", "skipped_unchanged". */
  public static String action(RoutingDecision d) {
    var field = d.getOneofFieldDescriptor(oneof(RoutingDecision.getDescriptor(), "action"));
    return field == null ? "" : field.getName();
  }

  /** The run a routing decision woke or delivered into, "" for none. */
  public static String runId(RoutingDecision d) {
    if (d.hasWake()) {
      return d.getWake().getRunId();
    }
    return d.hasDeliver() ? d.getDeliver().getRunId() : "";
  }
}
