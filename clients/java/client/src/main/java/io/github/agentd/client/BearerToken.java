package io.github.agentd.client;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import java.net.InetAddress;
import java.net.URI;
import java.util.concurrent.Executor;

/**
 * {@code authorization: Bearer <token>} on every call. It needs transport security: over a
 * plaintext connection it goes only where {@code allowInsecure} says (the client allows it for a
 * loopback target only).
 */
public final class BearerToken extends CallCredentials {
  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final String token;
  private final boolean allowInsecure;

  /** A token sent over TLS only. */
  public BearerToken(String token) {
    this(token, false);
  }

  /** A token that may also go over plaintext (a local sidecar that terminates TLS). */
  public BearerToken(String token, boolean allowInsecure) {
    this.token = token;
    this.allowInsecure = allowInsecure;
  }

  @Override
  public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
    if (!allowInsecure && info.getSecurityLevel() != SecurityLevel.PRIVACY_AND_INTEGRITY) {
      applier.fail(Status.UNAUTHENTICATED.withDescription(
          "agentd: the bearer token needs a TLS connection; it is not sent in clear"));
      return;
    }
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + token);
    applier.apply(headers);
  }

  /**
   * Whether every address of a gRPC target is on this machine: localhost, 127.0.0.0/8, ::1, or a
   * unix socket.
   */
  static boolean isLoopback(String target) {
    if (target.startsWith("unix:") || target.startsWith("unix-abstract:")) {
      return true;
    }
    String rest = target;
    for (String scheme : new String[] {"dns:///", "dns:", "ipv4:", "ipv6:", "passthrough:///"}) {
      if (rest.startsWith(scheme)) {
        rest = rest.substring(scheme.length());
        break;
      }
    }
    boolean seen = false;
    for (String address : rest.split(",")) {
      address = address.strip();
      if (address.isEmpty()) {
        continue;
      }
      seen = true;
      String host;
      try {
        host = URI.create("//" + address).getHost();
      } catch (IllegalArgumentException e) {
        return false;
      }
      if (host == null) {
        host = address;
      }
      host = host.replaceAll("^\\[|\\]$", "");
      if (host.equalsIgnoreCase("localhost") || host.equalsIgnoreCase("ip6-localhost")) {
        continue;
      }
      if (!host.matches("[0-9.]+|[0-9a-fA-F:]+")) {
        return false; // a name: never resolved here, so not known to be local
      }
      try {
        if (!InetAddress.getByName(host).isLoopbackAddress()) {
          return false;
        }
      } catch (java.net.UnknownHostException e) {
        return false;
      }
    }
    return seen;
  }
}
