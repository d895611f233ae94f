package io.github.agentd.proto.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * A processor written in any language: a service the user runs and agentd
 * calls (the `remote` processor). agentd does not serve it.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class ProcessorServiceGrpc {

  private ProcessorServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "agentd.v1.ProcessorService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ProcessRequest,
      io.github.agentd.proto.v1.ProcessResponse> getProcessMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Process",
      requestType = io.github.agentd.proto.v1.ProcessRequest.class,
      responseType = io.github.agentd.proto.v1.ProcessResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ProcessRequest,
      io.github.agentd.proto.v1.ProcessResponse> getProcessMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ProcessRequest, io.github.agentd.proto.v1.ProcessResponse> getProcessMethod;
    if ((getProcessMethod = ProcessorServiceGrpc.getProcessMethod) == null) {
      synchronized (ProcessorServiceGrpc.class) {
        if ((getProcessMethod = ProcessorServiceGrpc.getProcessMethod) == null) {
          ProcessorServiceGrpc.getProcessMethod = getProcessMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ProcessRequest, io.github.agentd.proto.v1.ProcessResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Process"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ProcessRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ProcessResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ProcessorServiceMethodDescriptorSupplier("Process"))
              .build();
        }
      }
    }
    return getProcessMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static ProcessorServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ProcessorServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ProcessorServiceStub>() {
        @java.lang.Override
        public ProcessorServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ProcessorServiceStub(channel, callOptions);
        }
      };
    return ProcessorServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static ProcessorServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ProcessorServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ProcessorServiceBlockingV2Stub>() {
        @java.lang.Override
        public ProcessorServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ProcessorServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return ProcessorServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static ProcessorServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ProcessorServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ProcessorServiceBlockingStub>() {
        @java.lang.Override
        public ProcessorServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ProcessorServiceBlockingStub(channel, callOptions);
        }
      };
    return ProcessorServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static ProcessorServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ProcessorServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ProcessorServiceFutureStub>() {
        @java.lang.Override
        public ProcessorServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ProcessorServiceFutureStub(channel, callOptions);
        }
      };
    return ProcessorServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * A processor written in any language: a service the user runs and agentd
   * calls (the `remote` processor). agentd does not serve it.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * One stream per run per remote processor. agentd sends `open` first; the
     * processor answers with `hello`, declaring its hooks. agentd then sends a
     * call for each declared hook only (a chunk nobody wants never crosses the
     * wire), and the processor answers each call, in order, by `call_id`.
     * agentd half-closes the stream when the run ends; the processor's state
     * for the run is the state of this stream.
     * </pre>
     */
    default io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ProcessRequest> process(
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ProcessResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getProcessMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service ProcessorService.
   * <pre>
   * A processor written in any language: a service the user runs and agentd
   * calls (the `remote` processor). agentd does not serve it.
   * </pre>
   */
  public static abstract class ProcessorServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return ProcessorServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service ProcessorService.
   * <pre>
   * A processor written in any language: a service the user runs and agentd
   * calls (the `remote` processor). agentd does not serve it.
   * </pre>
   */
  public static final class ProcessorServiceStub
      extends io.grpc.stub.AbstractAsyncStub<ProcessorServiceStub> {
    private ProcessorServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ProcessorServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ProcessorServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * One stream per run per remote processor. agentd sends `open` first; the
     * processor answers with `hello`, declaring its hooks. agentd then sends a
     * call for each declared hook only (a chunk nobody wants never crosses the
     * wire), and the processor answers each call, in order, by `call_id`.
     * agentd half-closes the stream when the run ends; the processor's state
     * for the run is the state of this stream.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ProcessRequest> process(
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ProcessResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          getChannel().newCall(getProcessMethod(), getCallOptions()), responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service ProcessorService.
   * <pre>
   * A processor written in any language: a service the user runs and agentd
   * calls (the `remote` processor). agentd does not serve it.
   * </pre>
   */
  public static final class ProcessorServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<ProcessorServiceBlockingV2Stub> {
    private ProcessorServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ProcessorServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ProcessorServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * One stream per run per remote processor. agentd sends `open` first; the
     * processor answers with `hello`, declaring its hooks. agentd then sends a
     * call for each declared hook only (a chunk nobody wants never crosses the
     * wire), and the processor answers each call, in order, by `call_id`.
     * agentd half-closes the stream when the run ends; the processor's state
     * for the run is the state of this stream.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<io.github.agentd.proto.v1.ProcessRequest, io.github.agentd.proto.v1.ProcessResponse>
        process() {
      return io.grpc.stub.ClientCalls.blockingBidiStreamingCall(
          getChannel(), getProcessMethod(), getCallOptions());
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service ProcessorService.
   * <pre>
   * A processor written in any language: a service the user runs and agentd
   * calls (the `remote` processor). agentd does not serve it.
   * </pre>
   */
  public static final class ProcessorServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<ProcessorServiceBlockingStub> {
    private ProcessorServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ProcessorServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ProcessorServiceBlockingStub(channel, callOptions);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service ProcessorService.
   * <pre>
   * A processor written in any language: a service the user runs and agentd
   * calls (the `remote` processor). agentd does not serve it.
   * </pre>
   */
  public static final class ProcessorServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<ProcessorServiceFutureStub> {
    private ProcessorServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ProcessorServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ProcessorServiceFutureStub(channel, callOptions);
    }
  }

  private static final int METHODID_PROCESS = 0;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_PROCESS:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.process(
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ProcessResponse>) responseObserver);
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getProcessMethod(),
          io.grpc.stub.ServerCalls.asyncBidiStreamingCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ProcessRequest,
              io.github.agentd.proto.v1.ProcessResponse>(
                service, METHODID_PROCESS)))
        .build();
  }

  private static abstract class ProcessorServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    ProcessorServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.github.agentd.proto.v1.ProcessorServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("ProcessorService");
    }
  }

  private static final class ProcessorServiceFileDescriptorSupplier
      extends ProcessorServiceBaseDescriptorSupplier {
    ProcessorServiceFileDescriptorSupplier() {}
  }

  private static final class ProcessorServiceMethodDescriptorSupplier
      extends ProcessorServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    ProcessorServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (ProcessorServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new ProcessorServiceFileDescriptorSupplier())
              .addMethod(getProcessMethod())
              .build();
        }
      }
    }
    return result;
  }
}
