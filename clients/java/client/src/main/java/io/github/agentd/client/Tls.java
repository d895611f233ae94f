package io.github.agentd.client;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * TLS to agentd from PEM files: the CA that signed the server's certificate (null: the system's
 * roots) and, for mutual TLS, the client's certificate and its PKCS#8 key.
 */
public record Tls(String caFile, String certFile, String keyFile) {
  /** TLS trusting the system's roots. */
  public static Tls system() {
    return new Tls(null, null, null);
  }

  /** TLS trusting this CA. */
  public static Tls ca(String caFile) {
    return new Tls(caFile, null, null);
  }

  /** Mutual TLS: trust this CA and present this certificate. */
  public static Tls mutual(String caFile, String certFile, String keyFile) {
    return new Tls(caFile, certFile, keyFile);
  }

  ChannelCredentials credentials() {
    if ((certFile == null) != (keyFile == null)) {
      throw new IllegalArgumentException("agentd: a client certificate needs both certFile and keyFile");
    }
    TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder();
    try {
      if (caFile != null) {
        b.trustManager(new File(caFile));
      }
      if (certFile != null) {
        b.keyManager(new File(certFile), new File(keyFile));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("agentd: reading the TLS files", e);
    }
    return b.build();
  }
}
