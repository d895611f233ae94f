package io.github.agentd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.ChunkBatch;
import io.github.agentd.proto.v1.ConnectRequest;
import io.github.agentd.proto.v1.ConnectResponse;
import io.github.agentd.proto.v1.ConnectRoutingAnswer;
import io.github.agentd.proto.v1.FinishChunk;
import io.github.agentd.proto.v1.RoutingDecision;
import io.github.agentd.proto.v1.RoutingWake;
import io.github.agentd.proto.v1.ThreadServiceGrpc;
import io.github.agentd.proto.v1.ThreadSnapshot;
import io.github.agentd.proto.v1.ToolCall;
import io.github.agentd.proto.v1.ToolResultAck;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Connect: routing answers, client tools answered by their handler, reconnection with resume. */
class SessionTest {
  /**
   * First stream: the snapshot, a wake, a client tool call at offset 1; after the tool result,
   * UNAVAILABLE. Second stream: replays offset 1 and finishes at offset 2.
   */
  static final class Threads extends ThreadServiceGrpc.ThreadServiceImplBase {
    final List<ConnectRequest> frames = new CopyOnWriteArrayList<>();

    @Override
    public StreamObserver<ConnectRequest> connect(StreamObserver<ConnectResponse> out) {
      return new StreamObserver<>() {
        private boolean first;

        @Override
        public void onNext(ConnectRequest req) {
          frames.add(req);
          switch (req.getFrameCase()) {
            case OPEN -> {
              first = !req.getOpen().hasResume();
              out.onNext(ConnectResponse.newBuilder().setRequestId(req.getRequestId())
                  .setSnapshot(ThreadSnapshot.newBuilder().setLogEpoch("e1")).build());
              if (!first) {
                out.onNext(chunks(call(), Chunk.newBuilder().setOffset(2).setRunId("run-1")
                    .setFinish(FinishChunk.getDefaultInstance()).build()));
              }
            }
            case SEND_MESSAGE -> {
              if (req.getSendMessage().getMessage().getText().equals("nobody")) {
                out.onNext(ConnectResponse.newBuilder().setRequestId(req.getRequestId())
                    .setError(com.google.rpc.Status.newBuilder().setCode(Status.Code.NOT_FOUND.value())
                        .setMessage("no agent").addDetails(Any.pack(ErrorInfo.newBuilder()
                            .setReason("AGENT_NOT_FOUND").build())))
                    .build());
                return;
              }
              out.onNext(ConnectResponse.newBuilder().setRequestId(req.getRequestId())
                  .setRouting(ConnectRoutingAnswer.newBuilder().setDecision(
                      RoutingDecision.newBuilder().setWake(RoutingWake.newBuilder().setRunId("run-1"))))
                  .build());
              out.onNext(chunks(call()));
            }
            case TOOL_RESULT -> {
              out.onNext(ConnectResponse.newBuilder().setRequestId(req.getRequestId())
                  .setToolResultAck(ToolResultAck.newBuilder().setRunId("run-1").setToolCallId("call-1")).build());
              out.onError(Status.UNAVAILABLE.withDescription("restarting").asRuntimeException());
            }
            default -> {}
          }
        }

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {
          out.onCompleted();
        }
      };
    }

    private static Chunk call() {
      return Chunk.newBuilder().setOffset(1).setRunId("run-1").setToolCall(ToolCall.newBuilder()
          .setToolCallId("call-1").setToolName("pick_color").setClientTool(true)).build();
    }

    private static ConnectResponse chunks(Chunk... chunks) {
      return ConnectResponse.newBuilder().setChunks(ChunkBatch.newBuilder().addAllChunks(List.of(chunks))).build();
    }
  }

  @Test
  void toolsAreAnsweredAndTheSessionResumesAfterAReconnection() throws Exception {
    Threads threads = new Threads();
    try (FakeServer server = new FakeServer(threads); AgentdClient client = server.client()) {
      List<String> kinds = new ArrayList<>();
      try (Session session = client.connect("tools", "u1", "t1", SessionOptions.builder()
          .tool("pick_color", args -> "blue").reconnect(3, java.time.Duration.ofMillis(1), java.time.Duration.ofMillis(5))
          .build())) {
        NotFoundException refused = assertThrows(NotFoundException.class,
            () -> session.sendMessage("nobody", SendOptions.NONE));
        assertEquals(Reasons.AGENT_NOT_FOUND, refused.reason());
        ConnectRoutingAnswer routing = session.sendMessage("choose", SendOptions.NONE);
        assertEquals("run-1", Values.runId(routing.getDecision()));
        for (Chunk c : session.chunks()) {
          kinds.add(Values.kind(c) + "@" + c.getOffset());
          if (Values.isLast(c)) {
            break;
          }
        }
      }
      assertEquals(List.of("tool_call@1", "finish@2"), kinds); // the replayed call is not seen twice
      List<ConnectRequest> opens = threads.frames.stream().filter(ConnectRequest::hasOpen).toList();
      assertEquals(2, opens.size());
      assertTrue(opens.get(0).getOpen().getStreamOptions().getClientToolsList().stream()
          .anyMatch(t -> t.getName().equals("pick_color")), "the tool is declared for the runs the session wakes");
      assertEquals(1, opens.get(1).getOpen().getResume().getAfterOffset());
      List<ConnectRequest> results = threads.frames.stream().filter(ConnectRequest::hasToolResult).toList();
      assertEquals(1, results.size());
      assertEquals("blue", results.get(0).getToolResult().getResult().getStringValue());
      assertFalse(results.get(0).getToolResult().getIsError());
    }
  }
}
