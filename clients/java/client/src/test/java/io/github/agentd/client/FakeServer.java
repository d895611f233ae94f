package io.github.agentd.client;

import io.grpc.BindableService;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import java.io.IOException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A real gRPC server on a loopback port serving scripted services, recording each call's headers. */
final class FakeServer implements AutoCloseable {
  final LinkedBlockingQueue<Metadata> headers = new LinkedBlockingQueue<>();
  private final Server server;

  FakeServer(BindableService... services) throws IOException {
    ServerInterceptor record = new ServerInterceptor() {
      @Override
      public <Q, R> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, R> call, Metadata h, ServerCallHandler<Q, R> next) {
        headers.add(h);
        return next.startCall(call, h);
      }
    };
    var builder = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create());
    for (BindableService s : services) {
      builder.addService(ServerInterceptors.intercept(s, record));
    }
    server = builder.build().start();
  }

  String target() {
    return "127.0.0.1:" + server.getPort();
  }

  AgentdClient client() {
    return AgentdClient.builder(target()).insecure().token(null).build();
  }

  @Override
  public void close() {
    server.shutdownNow();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      java.lang.Thread.currentThread().interrupt();
    }
  }
}
