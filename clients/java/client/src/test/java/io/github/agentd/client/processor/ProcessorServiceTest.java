package io.github.agentd.client.processor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.ChunkAnswer;
import io.github.agentd.proto.v1.Hook;
import io.github.agentd.proto.v1.HookAnswer;
import io.github.agentd.proto.v1.HookCall;
import io.github.agentd.proto.v1.Message;
import io.github.agentd.proto.v1.ProcessInputCall;
import io.github.agentd.proto.v1.ProcessOpen;
import io.github.agentd.proto.v1.ProcessOutputStreamCall;
import io.github.agentd.proto.v1.ProcessRequest;
import io.github.agentd.proto.v1.ProcessResponse;
import io.github.agentd.proto.v1.ProcessorServiceGrpc;
import io.github.agentd.proto.v1.TextDeltaChunk;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The processor helper as agentd sees it: a real gRPC server, driven through the raw Process stream. */
class ProcessorServiceTest {
  /** Streams: "keep" passes, "drop" is dropped, "stop" aborts, others are upper-cased. */
  static final class Upper implements Processor {
    @Override
    public String name() {
      return "upper";
    }

    @Override
    public Chunk processOutputStream(Run run, Chunk part) {
      String text = part.getTextDelta().getText();
      run.state().merge("parts", 1, (a, b) -> (int) a + (int) b);
      return switch (text) {
        case "keep" -> part;
        case "drop" -> null;
        case "stop" -> throw run.abort("stopped at part " + run.state().get("parts"), false, Map.of("n", 1));
        default -> part.toBuilder().setTextDelta(TextDeltaChunk.newBuilder().setText(text.toUpperCase())).build();
      };
    }

    @Override
    public List<Message> processInput(Run run, ProcessInputCall call) {
      throw new IllegalStateException("broken");
    }
  }

  private static Chunk delta(String text) {
    return Chunk.newBuilder().setTextDelta(TextDeltaChunk.newBuilder().setText(text)).build();
  }

  private static ProcessRequest streamCall(long id, String... texts) {
    ProcessOutputStreamCall.Builder call = ProcessOutputStreamCall.newBuilder();
    for (String t : texts) {
      call.addParts(delta(t));
    }
    return ProcessRequest.newBuilder().setCall(HookCall.newBuilder().setCallId(id).setProcessOutputStream(call)).build();
  }

  @Test
  void theHelloNamesTheOverriddenHooksAndEachPartGetsItsAnswer() throws Exception {
    Server server = ProcessorService.serve(new Upper(), "127.0.0.1", 0);
    ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    LinkedBlockingQueue<Object> got = new LinkedBlockingQueue<>();
    try {
      StreamObserver<ProcessRequest> send = ProcessorServiceGrpc.newStub(channel).process(new StreamObserver<>() {
        @Override
        public void onNext(ProcessResponse r) {
          got.add(r);
        }

        @Override
        public void onError(Throwable t) {
          got.add(t);
        }

        @Override
        public void onCompleted() {
          got.add("completed");
        }
      });
      send.onNext(ProcessRequest.newBuilder().setOpen(ProcessOpen.newBuilder().setRunId("run-1")).build());
      ProcessResponse hello = (ProcessResponse) got.poll(5, TimeUnit.SECONDS);
      assertEquals(List.of(Hook.HOOK_PROCESS_INPUT, Hook.HOOK_PROCESS_OUTPUT_STREAM), hello.getHello().getHooksList());
      assertEquals("upper", hello.getHello().getName());

      send.onNext(streamCall(1, "keep", "drop", "shout"));
      HookAnswer first = ((ProcessResponse) got.poll(5, TimeUnit.SECONDS)).getAnswer();
      assertEquals(1, first.getCallId());
      List<ChunkAnswer> answers = first.getChunks().getAnswersList();
      assertEquals(ChunkAnswer.ResultCase.PASS, answers.get(0).getResultCase());
      assertEquals(ChunkAnswer.ResultCase.DROP, answers.get(1).getResultCase());
      assertEquals("SHOUT", answers.get(2).getReplace().getTextDelta().getText());

      send.onNext(streamCall(2, "keep", "stop", "never"));
      HookAnswer second = ((ProcessResponse) got.poll(5, TimeUnit.SECONDS)).getAnswer();
      assertEquals("stopped at part 5", second.getAbort().getReason()); // the run's state spans calls
      assertEquals(1.0, second.getAbort().getMetadata().getFieldsOrThrow("n").getNumberValue());
      assertEquals(1, second.getChunks().getAnswersCount()); // the parts after the abort are unanswered

      send.onNext(ProcessRequest.newBuilder().setCall(HookCall.newBuilder().setCallId(3)
          .setProcessInput(ProcessInputCall.getDefaultInstance())).build());
      StatusRuntimeException failed = assertInstanceOf(StatusRuntimeException.class, got.poll(5, TimeUnit.SECONDS));
      assertTrue(failed.getStatus().getDescription().contains("broken"), failed.getStatus().toString());
    } finally {
      channel.shutdownNow();
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
