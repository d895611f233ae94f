package io.github.agentd.client.processor;

import io.github.agentd.client.Values;
import io.github.agentd.proto.v1.APIErrorAnswer;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.ChunkAnswer;
import io.github.agentd.proto.v1.ChunkAnswers;
import io.github.agentd.proto.v1.ChunkDrop;
import io.github.agentd.proto.v1.ChunkPass;
import io.github.agentd.proto.v1.Hook;
import io.github.agentd.proto.v1.HookAnswer;
import io.github.agentd.proto.v1.HookCall;
import io.github.agentd.proto.v1.Message;
import io.github.agentd.proto.v1.MessagesResult;
import io.github.agentd.proto.v1.ProcessAPIErrorCall;
import io.github.agentd.proto.v1.ProcessInputCall;
import io.github.agentd.proto.v1.ProcessInputStepCall;
import io.github.agentd.proto.v1.ProcessLLMRequestCall;
import io.github.agentd.proto.v1.ProcessLLMResponseCall;
import io.github.agentd.proto.v1.ProcessOutputResultCall;
import io.github.agentd.proto.v1.ProcessOutputStepCall;
import io.github.agentd.proto.v1.ProcessRequest;
import io.github.agentd.proto.v1.ProcessResponse;
import io.github.agentd.proto.v1.ProcessToolResultCall;
import io.github.agentd.proto.v1.ProcessorAbort;
import io.github.agentd.proto.v1.ProcessorHello;
import io.github.agentd.proto.v1.ProcessorServiceGrpc;
import io.github.agentd.proto.v1.StepOverrides;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * agentd's {@code ProcessorService} over a {@link Processor}: one stream per run, answered in
 * order. Add it to a gRPC server of your own, or {@link #serve} it.
 */
public final class ProcessorService extends ProcessorServiceGrpc.ProcessorServiceImplBase {
  /** Each hook: the method a Processor overrides to implement it, and its call's type. */
  private static final Map<Hook, Map.Entry<String, Class<?>>> HOOKS = Map.of(
      Hook.HOOK_PROCESS_INPUT, Map.entry("processInput", ProcessInputCall.class),
      Hook.HOOK_PROCESS_INPUT_STEP, Map.entry("processInputStep", ProcessInputStepCall.class),
      Hook.HOOK_PROCESS_LLM_REQUEST, Map.entry("processLlmRequest", ProcessLLMRequestCall.class),
      Hook.HOOK_PROCESS_LLM_RESPONSE, Map.entry("processLlmResponse", ProcessLLMResponseCall.class),
      Hook.HOOK_PROCESS_OUTPUT_STREAM, Map.entry("processOutputStream", Chunk.class),
      Hook.HOOK_PROCESS_OUTPUT_STEP, Map.entry("processOutputStep", ProcessOutputStepCall.class),
      Hook.HOOK_PROCESS_OUTPUT_RESULT, Map.entry("processOutputResult", ProcessOutputResultCall.class),
      Hook.HOOK_PROCESS_TOOL_RESULT, Map.entry("processToolResult", ProcessToolResultCall.class),
      Hook.HOOK_PROCESS_API_ERROR, Map.entry("processApiError", ProcessAPIErrorCall.class));

  private static final ChunkAnswer PASS = ChunkAnswer.newBuilder().setPass(ChunkPass.getDefaultInstance()).build();
  private static final ChunkAnswer DROP = ChunkAnswer.newBuilder().setDrop(ChunkDrop.getDefaultInstance()).build();

  private final Processor processor;
  private final ProcessorHello hello;

  public ProcessorService(Processor processor) {
    this.processor = processor;
    this.hello = ProcessorHello.newBuilder().addAllHooks(hooks(processor))
        .setProcessDataParts(processor.processDataParts()).setName(processor.name()).build();
  }

  /** Serves the processor on host:port (port 0: any free one; see {@code getPort()}), in plaintext. */
  public static Server serve(Processor processor, String host, int port) throws IOException {
    return NettyServerBuilder.forAddress(new InetSocketAddress(host, port), InsecureServerCredentials.create())
        .addService(new ProcessorService(processor)).build().start();
  }

  /** The hooks the processor overrides, in the proto's order: agentd calls only those. */
  static List<Hook> hooks(Processor p) {
    List<Hook> out = new ArrayList<>();
    for (Hook hook : Hook.values()) {
      Map.Entry<String, Class<?>> method = HOOKS.get(hook);
      if (method == null) {
        continue;
      }
      try {
        if (p.getClass().getMethod(method.getKey(), Run.class, method.getValue()).getDeclaringClass()
            != Processor.class) {
          out.add(hook);
        }
      } catch (NoSuchMethodException e) {
        throw new IllegalStateException(e);
      }
    }
    return out;
  }

  @Override
  public StreamObserver<ProcessRequest> process(StreamObserver<ProcessResponse> out) {
    return new StreamObserver<>() {
      private Run run;
      private boolean ended;

      @Override
      public void onNext(ProcessRequest req) {
        if (ended) {
          return;
        }
        if (run == null) {
          if (!req.hasOpen()) {
            end(Status.INVALID_ARGUMENT.withDescription("the first message must be open"));
            return;
          }
          run = new Run(req.getOpen());
          out.onNext(ProcessResponse.newBuilder().setHello(hello).build());
          return;
        }
        if (!req.hasCall()) {
          return;
        }
        try {
          out.onNext(ProcessResponse.newBuilder().setAnswer(answer(run, req.getCall())).build());
        } catch (Exception e) {
          end(Status.INTERNAL.withDescription(processor.name() + ": " + e).withCause(e));
        }
      }

      private void end(Status status) {
        ended = true;
        out.onError(status.asRuntimeException());
      }

      @Override
      public void onError(Throwable t) {
        ended = true; // agentd went away: the run is over
      }

      @Override
      public void onCompleted() {
        if (!ended) {
          ended = true;
          out.onCompleted();
        }
      }
    };
  }

  private HookAnswer answer(Run run, HookCall call) throws Exception {
    HookAnswer.Builder answer = HookAnswer.newBuilder().setCallId(call.getCallId());
    run.call(answer, call.getRetryCount());
    try {
      dispatch(run, call, answer);
    } catch (AbortException abort) {
      answer.setAbort(ProcessorAbort.newBuilder().setReason(abort.reason()).setRetry(abort.retry())
          .setMetadata(Values.struct(abort.metadata())));
    }
    return answer.build();
  }

  private static MessagesResult messages(List<Message> out) {
    return MessagesResult.newBuilder().addAllMessages(out).build();
  }

  private void dispatch(Run run, HookCall call, HookAnswer.Builder answer) throws Exception {
    Processor p = processor;
    switch (call.getHookCase()) {
      case PROCESS_INPUT -> {
        List<Message> out = p.processInput(run, call.getProcessInput());
        if (out != null) {
          answer.setMessages(messages(out));
        }
      }
      case PROCESS_INPUT_STEP -> {
        StepOverrides out = p.processInputStep(run, call.getProcessInputStep());
        if (out != null) {
          answer.setStep(out);
        }
      }
      case PROCESS_LLM_REQUEST -> {
        List<Message> out = p.processLlmRequest(run, call.getProcessLlmRequest());
        if (out != null) {
          answer.setPrompt(messages(out));
        }
      }
      case PROCESS_LLM_RESPONSE -> p.processLlmResponse(run, call.getProcessLlmResponse());
      case PROCESS_OUTPUT_STREAM -> stream(run, call.getProcessOutputStream().getPartsList(), answer);
      case PROCESS_OUTPUT_STEP -> {
        List<Message> out = p.processOutputStep(run, call.getProcessOutputStep());
        if (out != null) {
          answer.setMessages(messages(out));
        }
      }
      case PROCESS_OUTPUT_RESULT -> {
        List<Message> out = p.processOutputResult(run, call.getProcessOutputResult());
        if (out != null) {
          answer.setMessages(messages(out));
        }
      }
      case PROCESS_TOOL_RESULT -> {
        List<Message> out = p.processToolResult(run, call.getProcessToolResult());
        if (out != null) {
          answer.setMessages(messages(out));
        }
      }
      case PROCESS_API_ERROR -> {
        if (p.processApiError(run, call.getProcessApiError())) {
          answer.setApiError(APIErrorAnswer.newBuilder().setRetry(true));
        }
      }
      case HOOK_NOT_SET -> {}
    }
  }

  /** Answers each part in order; an abort leaves the parts after it unanswered. */
  private void stream(Run run, List<Chunk> parts, HookAnswer.Builder answer) throws Exception {
    ChunkAnswers.Builder answers = ChunkAnswers.newBuilder();
    try {
      for (Chunk part : parts) {
        Chunk out = processor.processOutputStream(run, part);
        if (out == null) {
          answers.addAnswers(DROP);
        } else if (out.equals(part)) {
          answers.addAnswers(PASS);
        } else {
          answers.addAnswers(ChunkAnswer.newBuilder().setReplace(out));
        }
      }
    } finally {
      answer.setChunks(answers);
    }
  }
}
