package io.github.agentd.client;

import io.github.agentd.proto.v1.ActiveBehavior;
import io.github.agentd.proto.v1.Attribute;
import io.github.agentd.proto.v1.IdleBehavior;
import io.github.agentd.proto.v1.IfActive;
import io.github.agentd.proto.v1.IfIdle;
import io.github.agentd.proto.v1.MessageInput;
import java.util.List;
import java.util.Map;

/** Options of a send (message, signal, state, notification): ids, attributes, routing, wake options. */
public final class SendOptions {
  public static final SendOptions NONE = builder().build();

  private final MessageInput.Builder message;
  final IfActive ifActive;
  final IfIdle ifIdle;

  private SendOptions(Builder b) {
    message = b.message.clone();
    ifActive = b.ifActive == null ? null : b.ifActive.build();
    ifIdle = b.ifIdle == null ? null : b.ifIdle.build();
  }

  public static Builder builder() {
    return new Builder();
  }

  MessageInput message(String text) {
    return message.clone().setText(text).build();
  }

  /** Builds SendOptions. */
  public static final class Builder {
    private final MessageInput.Builder message = MessageInput.newBuilder();
    private IfActive.Builder ifActive;
    private IfIdle.Builder ifIdle;

    private Builder() {}

    /** The message's id: a retry with the same id is idempotent. */
    public Builder messageId(String id) {
      message.setId(id);
      return this;
    }

    public Builder messageAttributes(Attribute... attrs) {
      message.addAllAttributes(List.of(attrs));
      return this;
    }

    public Builder messageMetadata(Map<String, ?> metadata) {
      message.setMetadata(Values.struct(metadata));
      return this;
    }

    public Builder messageProviderOptions(Map<String, ?> options) {
      message.setProviderOptions(Values.struct(options));
      return this;
    }

    /** What to do when the thread has an active run. */
    public Builder ifActive(ActiveBehavior behavior, Attribute... attrs) {
      ifActive = IfActive.newBuilder().setBehavior(behavior).addAllAttributes(List.of(attrs));
      return this;
    }

    /** What to do when the thread is idle. */
    public Builder ifIdle(IdleBehavior behavior, Attribute... attrs) {
      idle().setBehavior(behavior).addAllAttributes(List.of(attrs));
      return this;
    }

    /** The options of the run a send wakes. */
    public Builder wakeOptions(RunOptions options) {
      idle().setStreamOptions(options.execution);
      return this;
    }

    private IfIdle.Builder idle() {
      if (ifIdle == null) {
        ifIdle = IfIdle.newBuilder();
      }
      return ifIdle;
    }

    public SendOptions build() {
      return new SendOptions(this);
    }
  }
}
