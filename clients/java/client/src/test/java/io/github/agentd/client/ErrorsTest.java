package io.github.agentd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.github.agentd.proto.v1.AgentServiceGrpc;
import io.github.agentd.proto.v1.GenerateRequest;
import io.github.agentd.proto.v1.GenerateResponse;
import io.github.agentd.proto.v1.StreamRequest;
import io.github.agentd.proto.v1.StreamResponse;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** Failed calls throw typed exceptions carrying the status details agentd attaches. */
class ErrorsTest {
  /** Answers each Generate by its text: "missing", "limited", "invalid"; else echoes. */
  static final class Agents extends AgentServiceGrpc.AgentServiceImplBase {
    @Override
    public void generate(GenerateRequest req, StreamObserver<GenerateResponse> out) {
      com.google.rpc.Status.Builder status = com.google.rpc.Status.newBuilder();
      switch (req.getText()) {
        case "missing" -> status.setCode(Status.Code.NOT_FOUND.value()).setMessage("no agent")
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("AGENT_NOT_FOUND").setDomain("agentd")
                .putMetadata("agent_id", req.getAgentId()).build()));
        case "limited" -> status.setCode(Status.Code.RESOURCE_EXHAUSTED.value()).setMessage("slow down")
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("RATE_LIMITED").setDomain("agentd").build()))
            .addDetails(Any.pack(RetryInfo.newBuilder()
                .setRetryDelay(com.google.protobuf.Duration.newBuilder().setSeconds(2).setNanos(500_000_000)).build()));
        case "invalid" -> status.setCode(Status.Code.INVALID_ARGUMENT.value()).setMessage("bad")
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("INVALID_REQUEST").setDomain("agentd").build()))
            .addDetails(Any.pack(BadRequest.newBuilder()
                .addFieldViolations(BadRequest.FieldViolation.newBuilder().setField("text").setDescription("too long"))
                .addFieldViolations(BadRequest.FieldViolation.newBuilder().setField("text").setDescription("odd"))
                .build()));
        default -> {
          out.onNext(GenerateResponse.newBuilder().setText(req.getText()).build());
          out.onCompleted();
          return;
        }
      }
      out.onError(StatusProto.toStatusRuntimeException(status.build()));
    }

    @Override
    public void stream(StreamRequest req, StreamObserver<StreamResponse> out) {
      out.onError(StatusProto.toStatusRuntimeException(com.google.rpc.Status.newBuilder()
          .setCode(Status.Code.NOT_FOUND.value()).setMessage("no agent")
          .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("AGENT_NOT_FOUND").build())).build()));
    }
  }

  @Test
  void notFoundCarriesTheReasonAndMetadata() throws Exception {
    try (FakeServer server = new FakeServer(new Agents()); AgentdClient client = server.client()) {
      NotFoundException e = assertThrows(NotFoundException.class, () -> client.generate("ghost", "missing"));
      assertEquals(Status.Code.NOT_FOUND, e.code());
      assertEquals("NOT_FOUND", e.codeName());
      assertEquals(Reasons.AGENT_NOT_FOUND, e.reason());
      assertEquals("agentd", e.domain());
      assertEquals("ghost", e.metadata().get("agent_id"));
      assertEquals("no agent", e.statusMessage());
    }
  }

  @Test
  void aRateLimitSaysHowLongToWait() throws Exception {
    try (FakeServer server = new FakeServer(new Agents()); AgentdClient client = server.client()) {
      ResourceExhaustedException e =
          assertThrows(ResourceExhaustedException.class, () -> client.generate("a", "limited"));
      assertEquals(Reasons.RATE_LIMITED, e.reason());
      assertEquals(Duration.ofMillis(2500), e.retryDelay().orElseThrow());
    }
  }

  @Test
  void invalidRequestsListTheirFieldViolations() throws Exception {
    try (FakeServer server = new FakeServer(new Agents()); AgentdClient client = server.client()) {
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> client.generate("a", "invalid"));
      assertEquals(2, e.fieldViolations().size());
      assertEquals(Map.of("text", "too long; odd"), e.violations());
    }
  }

  @Test
  void asyncCallsFailWithTheSameException() throws Exception {
    try (FakeServer server = new FakeServer(new Agents()); AgentdClient client = server.client()) {
      var future = client.generateAsync("ghost", "missing", RunOptions.NONE);
      CompletionException e = assertThrows(CompletionException.class, future::join);
      NotFoundException cause = assertInstanceOf(NotFoundException.class, e.getCause());
      assertEquals(Reasons.AGENT_NOT_FOUND, cause.reason());
      assertEquals("echo", client.generateAsync("a", "echo", RunOptions.NONE).join().getText());
    }
  }

  @Test
  void aStreamThatFailsThrowsFromTheLoop() throws Exception {
    try (FakeServer server = new FakeServer(new Agents()); AgentdClient client = server.client()) {
      NotFoundException e = assertThrows(NotFoundException.class, () -> {
        try (var chunks = client.stream("ghost", "x")) {
          chunks.forEach(c -> {});
        }
      });
      assertEquals(Reasons.AGENT_NOT_FOUND, e.reason());
    }
  }

  @Test
  void aTransportFailureIsUnavailableWithoutAReason() throws Exception {
    String target;
    try (FakeServer server = new FakeServer(new Agents())) {
      target = server.target();
    }
    try (AgentdClient client = AgentdClient.builder(target).insecure().token(null).build()) {
      UnavailableException e = assertThrows(UnavailableException.class, () -> client.generate("a", "x"));
      assertEquals("", e.reason());
      assertTrue(e.retryable());
    }
  }
}
