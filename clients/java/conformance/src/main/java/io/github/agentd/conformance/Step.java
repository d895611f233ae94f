package io.github.agentd.conformance;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** One decoded step of a scenario, and its {@code expect} object: every expectation must be read. */
final class Step {
  private final Map<String, Object> fields;
  private final Map<String, Object> expect;
  private final Set<String> used = new HashSet<>();

  @SuppressWarnings("unchecked")
  Step(Map<String, Object> fields) {
    this.fields = fields;
    Object e = fields.get("expect");
    this.expect = e instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  boolean has(String key) {
    return fields.containsKey(key);
  }

  Object get(String key) {
    return fields.get(key);
  }

  String str(String key) throws Runner.Failure {
    if (!(fields.get(key) instanceof String s) || s.isEmpty()) {
      throw new Runner.Failure("field \"" + key + "\": want a non-empty string, got " + fields.get(key));
    }
    return s;
  }

  String optStr(String key) {
    return fields.get(key) instanceof String s ? s : "";
  }

  int num(String key) throws Runner.Failure {
    if (!(fields.get(key) instanceof Number n) || n.doubleValue() != Math.rint(n.doubleValue())) {
      throw new Runner.Failure("field \"" + key + "\": want an integer, got " + fields.get(key));
    }
    return n.intValue();
  }

  boolean expects(String key) {
    return expect.containsKey(key);
  }

  Object expected(String key) {
    if (expect.containsKey(key)) {
      used.add(key);
    }
    return expect.get(key);
  }

  List<String> strings(String key) {
    Object v = expected(key);
    return v instanceof List<?> list ? list.stream().map(String::valueOf).toList() : List.of();
  }

  /** Fails on expectations no check read. */
  void unknown() throws Runner.Failure {
    Set<String> left = new TreeSet<>(expect.keySet());
    left.removeAll(used);
    if (!left.isEmpty()) {
      throw new Runner.Failure("unknown expectation(s) " + String.join(", ", left));
    }
  }
}
