package io.github.agentd.proto.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Conversation threads: storage, live subscriptions and the bidirectional
 * thread stream.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class ThreadServiceGrpc {

  private ThreadServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "agentd.v1.ThreadService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.CreateThreadRequest,
      io.github.agentd.proto.v1.CreateThreadResponse> getCreateThreadMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateThread",
      requestType = io.github.agentd.proto.v1.CreateThreadRequest.class,
      responseType = io.github.agentd.proto.v1.CreateThreadResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.CreateThreadRequest,
      io.github.agentd.proto.v1.CreateThreadResponse> getCreateThreadMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.CreateThreadRequest, io.github.agentd.proto.v1.CreateThreadResponse> getCreateThreadMethod;
    if ((getCreateThreadMethod = ThreadServiceGrpc.getCreateThreadMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getCreateThreadMethod = ThreadServiceGrpc.getCreateThreadMethod) == null) {
          ThreadServiceGrpc.getCreateThreadMethod = getCreateThreadMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.CreateThreadRequest, io.github.agentd.proto.v1.CreateThreadResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateThread"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.CreateThreadRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.CreateThreadResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("CreateThread"))
              .build();
        }
      }
    }
    return getCreateThreadMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetThreadRequest,
      io.github.agentd.proto.v1.GetThreadResponse> getGetThreadMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetThread",
      requestType = io.github.agentd.proto.v1.GetThreadRequest.class,
      responseType = io.github.agentd.proto.v1.GetThreadResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetThreadRequest,
      io.github.agentd.proto.v1.GetThreadResponse> getGetThreadMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetThreadRequest, io.github.agentd.proto.v1.GetThreadResponse> getGetThreadMethod;
    if ((getGetThreadMethod = ThreadServiceGrpc.getGetThreadMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getGetThreadMethod = ThreadServiceGrpc.getGetThreadMethod) == null) {
          ThreadServiceGrpc.getGetThreadMethod = getGetThreadMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.GetThreadRequest, io.github.agentd.proto.v1.GetThreadResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetThread"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetThreadRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetThreadResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("GetThread"))
              .build();
        }
      }
    }
    return getGetThreadMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListThreadsRequest,
      io.github.agentd.proto.v1.ListThreadsResponse> getListThreadsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListThreads",
      requestType = io.github.agentd.proto.v1.ListThreadsRequest.class,
      responseType = io.github.agentd.proto.v1.ListThreadsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListThreadsRequest,
      io.github.agentd.proto.v1.ListThreadsResponse> getListThreadsMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListThreadsRequest, io.github.agentd.proto.v1.ListThreadsResponse> getListThreadsMethod;
    if ((getListThreadsMethod = ThreadServiceGrpc.getListThreadsMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getListThreadsMethod = ThreadServiceGrpc.getListThreadsMethod) == null) {
          ThreadServiceGrpc.getListThreadsMethod = getListThreadsMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ListThreadsRequest, io.github.agentd.proto.v1.ListThreadsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListThreads"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListThreadsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListThreadsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("ListThreads"))
              .build();
        }
      }
    }
    return getListThreadsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateThreadRequest,
      io.github.agentd.proto.v1.UpdateThreadResponse> getUpdateThreadMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateThread",
      requestType = io.github.agentd.proto.v1.UpdateThreadRequest.class,
      responseType = io.github.agentd.proto.v1.UpdateThreadResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateThreadRequest,
      io.github.agentd.proto.v1.UpdateThreadResponse> getUpdateThreadMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateThreadRequest, io.github.agentd.proto.v1.UpdateThreadResponse> getUpdateThreadMethod;
    if ((getUpdateThreadMethod = ThreadServiceGrpc.getUpdateThreadMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getUpdateThreadMethod = ThreadServiceGrpc.getUpdateThreadMethod) == null) {
          ThreadServiceGrpc.getUpdateThreadMethod = getUpdateThreadMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.UpdateThreadRequest, io.github.agentd.proto.v1.UpdateThreadResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateThread"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.UpdateThreadRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.UpdateThreadResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("UpdateThread"))
              .build();
        }
      }
    }
    return getUpdateThreadMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteThreadRequest,
      io.github.agentd.proto.v1.DeleteThreadResponse> getDeleteThreadMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteThread",
      requestType = io.github.agentd.proto.v1.DeleteThreadRequest.class,
      responseType = io.github.agentd.proto.v1.DeleteThreadResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteThreadRequest,
      io.github.agentd.proto.v1.DeleteThreadResponse> getDeleteThreadMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteThreadRequest, io.github.agentd.proto.v1.DeleteThreadResponse> getDeleteThreadMethod;
    if ((getDeleteThreadMethod = ThreadServiceGrpc.getDeleteThreadMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getDeleteThreadMethod = ThreadServiceGrpc.getDeleteThreadMethod) == null) {
          ThreadServiceGrpc.getDeleteThreadMethod = getDeleteThreadMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.DeleteThreadRequest, io.github.agentd.proto.v1.DeleteThreadResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteThread"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.DeleteThreadRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.DeleteThreadResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("DeleteThread"))
              .build();
        }
      }
    }
    return getDeleteThreadMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListMessagesRequest,
      io.github.agentd.proto.v1.ListMessagesResponse> getListMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListMessages",
      requestType = io.github.agentd.proto.v1.ListMessagesRequest.class,
      responseType = io.github.agentd.proto.v1.ListMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListMessagesRequest,
      io.github.agentd.proto.v1.ListMessagesResponse> getListMessagesMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListMessagesRequest, io.github.agentd.proto.v1.ListMessagesResponse> getListMessagesMethod;
    if ((getListMessagesMethod = ThreadServiceGrpc.getListMessagesMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getListMessagesMethod = ThreadServiceGrpc.getListMessagesMethod) == null) {
          ThreadServiceGrpc.getListMessagesMethod = getListMessagesMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ListMessagesRequest, io.github.agentd.proto.v1.ListMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("ListMessages"))
              .build();
        }
      }
    }
    return getListMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SubscribeRequest,
      io.github.agentd.proto.v1.SubscribeResponse> getSubscribeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Subscribe",
      requestType = io.github.agentd.proto.v1.SubscribeRequest.class,
      responseType = io.github.agentd.proto.v1.SubscribeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SubscribeRequest,
      io.github.agentd.proto.v1.SubscribeResponse> getSubscribeMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SubscribeRequest, io.github.agentd.proto.v1.SubscribeResponse> getSubscribeMethod;
    if ((getSubscribeMethod = ThreadServiceGrpc.getSubscribeMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getSubscribeMethod = ThreadServiceGrpc.getSubscribeMethod) == null) {
          ThreadServiceGrpc.getSubscribeMethod = getSubscribeMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.SubscribeRequest, io.github.agentd.proto.v1.SubscribeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Subscribe"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SubscribeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SubscribeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("Subscribe"))
              .build();
        }
      }
    }
    return getSubscribeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ConnectRequest,
      io.github.agentd.proto.v1.ConnectResponse> getConnectMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Connect",
      requestType = io.github.agentd.proto.v1.ConnectRequest.class,
      responseType = io.github.agentd.proto.v1.ConnectResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ConnectRequest,
      io.github.agentd.proto.v1.ConnectResponse> getConnectMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ConnectRequest, io.github.agentd.proto.v1.ConnectResponse> getConnectMethod;
    if ((getConnectMethod = ThreadServiceGrpc.getConnectMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getConnectMethod = ThreadServiceGrpc.getConnectMethod) == null) {
          ThreadServiceGrpc.getConnectMethod = getConnectMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ConnectRequest, io.github.agentd.proto.v1.ConnectResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Connect"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ConnectRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ConnectResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("Connect"))
              .build();
        }
      }
    }
    return getConnectMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.AbortRunRequest,
      io.github.agentd.proto.v1.AbortRunResponse> getAbortRunMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "AbortRun",
      requestType = io.github.agentd.proto.v1.AbortRunRequest.class,
      responseType = io.github.agentd.proto.v1.AbortRunResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.AbortRunRequest,
      io.github.agentd.proto.v1.AbortRunResponse> getAbortRunMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.AbortRunRequest, io.github.agentd.proto.v1.AbortRunResponse> getAbortRunMethod;
    if ((getAbortRunMethod = ThreadServiceGrpc.getAbortRunMethod) == null) {
      synchronized (ThreadServiceGrpc.class) {
        if ((getAbortRunMethod = ThreadServiceGrpc.getAbortRunMethod) == null) {
          ThreadServiceGrpc.getAbortRunMethod = getAbortRunMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.AbortRunRequest, io.github.agentd.proto.v1.AbortRunResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "AbortRun"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.AbortRunRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.AbortRunResponse.getDefaultInstance()))
              .setSchemaDescriptor(new ThreadServiceMethodDescriptorSupplier("AbortRun"))
              .build();
        }
      }
    }
    return getAbortRunMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static ThreadServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ThreadServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ThreadServiceStub>() {
        @java.lang.Override
        public ThreadServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ThreadServiceStub(channel, callOptions);
        }
      };
    return ThreadServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static ThreadServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ThreadServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ThreadServiceBlockingV2Stub>() {
        @java.lang.Override
        public ThreadServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ThreadServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return ThreadServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static ThreadServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ThreadServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ThreadServiceBlockingStub>() {
        @java.lang.Override
        public ThreadServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ThreadServiceBlockingStub(channel, callOptions);
        }
      };
    return ThreadServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static ThreadServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<ThreadServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<ThreadServiceFutureStub>() {
        @java.lang.Override
        public ThreadServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new ThreadServiceFutureStub(channel, callOptions);
        }
      };
    return ThreadServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Conversation threads: storage, live subscriptions and the bidirectional
   * thread stream.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * ALREADY_EXISTS (THREAD_ALREADY_EXISTS) when the id is taken.
     * </pre>
     */
    default void createThread(io.github.agentd.proto.v1.CreateThreadRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.CreateThreadResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateThreadMethod(), responseObserver);
    }

    /**
     */
    default void getThread(io.github.agentd.proto.v1.GetThreadRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetThreadResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetThreadMethod(), responseObserver);
    }

    /**
     * <pre>
     * Threads of a resource, newest first (AIP-158 pagination).
     * </pre>
     */
    default void listThreads(io.github.agentd.proto.v1.ListThreadsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListThreadsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListThreadsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Updates title and/or metadata per the field mask.
     * </pre>
     */
    default void updateThread(io.github.agentd.proto.v1.UpdateThreadRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateThreadResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateThreadMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes a thread and its messages.
     * </pre>
     */
    default void deleteThread(io.github.agentd.proto.v1.DeleteThreadRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteThreadResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteThreadMethod(), responseObserver);
    }

    /**
     */
    default void listMessages(io.github.agentd.proto.v1.ListMessagesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Streams a thread's chunks across runs, one run after another, including
     * signal echoes.
     * Contract:
     * - The first message is always a `snapshot`: the active run id (empty
     *   when idle), the thread's log epoch and the offset of the last chunk in
     *   its log.
     * - Then `chunks` batches follow, in offset order, each batch holding
     *   chunks of one run. Offsets strictly increase; a client must tolerate
     *   gaps in offsets (chunks that are not logged, e.g. of other agents'
     *   internal runs, never take an offset, but a future version may skip
     *   numbers) and must not assume offset == seq.
     * - With `resume`, the server first replays every logged chunk after
     *   `resume.after_offset`, then continues live, with no gap and no
     *   duplicate. A resume whose epoch differs from the thread's, or whose
     *   offset the server no longer holds, fails with OUT_OF_RANGE
     *   (RESUME_OFFSET_EXPIRED): read the history with ListMessages and
     *   subscribe again without resume.
     * - A subscriber that reads too slowly to keep up gets `fell_behind` with
     *   the last offset it was sent; the stream then ends with status OK and
     *   the client resumes after that offset. A slow subscriber never slows
     *   the run or other subscribers.
     * - Ending the stream never aborts the run.
     * - On server shutdown the stream ends with UNAVAILABLE (SERVER_SHUTDOWN);
     *   reconnect and resume.
     * </pre>
     */
    default void subscribe(io.github.agentd.proto.v1.SubscribeRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SubscribeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSubscribeMethod(), responseObserver);
    }

    /**
     * <pre>
     * A bidirectional thread stream: everything Subscribe sends, plus
     * answers to the client's frames.
     * Contract:
     * - The client's first frame must be `open`; the server answers with a
     *   `snapshot`, then behaves as Subscribe.
     * - Every later client frame carries a client-chosen `request_id`; its
     *   answer (`routing`, `abort`, `tool_result_ack`) or `error` carries the
     *   same id. Answers interleave with chunk batches; the routing answer of a
     *   send that wakes the thread comes before that run's chunks.
     * - A bad frame gets an `error` answer and does not end the stream. A
     *   second `open`, or a frame before `open`, is such an error.
     * - Client tools declared by a run are answered with `tool_result` frames.
     * - Half-closing the client side ends the stream after pending answers;
     *   it never aborts the run. Fell-behind, resume and shutdown behave as in
     *   Subscribe.
     * </pre>
     */
    default io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ConnectRequest> connect(
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ConnectResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getConnectMethod(), responseObserver);
    }

    /**
     * <pre>
     * Aborts the thread's active run. Answers whether a run was aborted.
     * With `run_id` and no `thread_id`, aborts a run that has no thread (a
     * Generate or Stream without memory), for the caller that started it, on
     * the replica that serves it. A run that ended, an unknown id, or another
     * caller's run answers `aborted = false`: a finished run is gone.
     * </pre>
     */
    default void abortRun(io.github.agentd.proto.v1.AbortRunRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.AbortRunResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getAbortRunMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service ThreadService.
   * <pre>
   * Conversation threads: storage, live subscriptions and the bidirectional
   * thread stream.
   * </pre>
   */
  public static abstract class ThreadServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return ThreadServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service ThreadService.
   * <pre>
   * Conversation threads: storage, live subscriptions and the bidirectional
   * thread stream.
   * </pre>
   */
  public static final class ThreadServiceStub
      extends io.grpc.stub.AbstractAsyncStub<ThreadServiceStub> {
    private ThreadServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ThreadServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ThreadServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS (THREAD_ALREADY_EXISTS) when the id is taken.
     * </pre>
     */
    public void createThread(io.github.agentd.proto.v1.CreateThreadRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.CreateThreadResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateThreadMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getThread(io.github.agentd.proto.v1.GetThreadRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetThreadResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetThreadMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Threads of a resource, newest first (AIP-158 pagination).
     * </pre>
     */
    public void listThreads(io.github.agentd.proto.v1.ListThreadsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListThreadsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListThreadsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Updates title and/or metadata per the field mask.
     * </pre>
     */
    public void updateThread(io.github.agentd.proto.v1.UpdateThreadRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateThreadResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateThreadMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes a thread and its messages.
     * </pre>
     */
    public void deleteThread(io.github.agentd.proto.v1.DeleteThreadRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteThreadResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteThreadMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listMessages(io.github.agentd.proto.v1.ListMessagesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Streams a thread's chunks across runs, one run after another, including
     * signal echoes.
     * Contract:
     * - The first message is always a `snapshot`: the active run id (empty
     *   when idle), the thread's log epoch and the offset of the last chunk in
     *   its log.
     * - Then `chunks` batches follow, in offset order, each batch holding
     *   chunks of one run. Offsets strictly increase; a client must tolerate
     *   gaps in offsets (chunks that are not logged, e.g. of other agents'
     *   internal runs, never take an offset, but a future version may skip
     *   numbers) and must not assume offset == seq.
     * - With `resume`, the server first replays every logged chunk after
     *   `resume.after_offset`, then continues live, with no gap and no
     *   duplicate. A resume whose epoch differs from the thread's, or whose
     *   offset the server no longer holds, fails with OUT_OF_RANGE
     *   (RESUME_OFFSET_EXPIRED): read the history with ListMessages and
     *   subscribe again without resume.
     * - A subscriber that reads too slowly to keep up gets `fell_behind` with
     *   the last offset it was sent; the stream then ends with status OK and
     *   the client resumes after that offset. A slow subscriber never slows
     *   the run or other subscribers.
     * - Ending the stream never aborts the run.
     * - On server shutdown the stream ends with UNAVAILABLE (SERVER_SHUTDOWN);
     *   reconnect and resume.
     * </pre>
     */
    public void subscribe(io.github.agentd.proto.v1.SubscribeRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SubscribeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getSubscribeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * A bidirectional thread stream: everything Subscribe sends, plus
     * answers to the client's frames.
     * Contract:
     * - The client's first frame must be `open`; the server answers with a
     *   `snapshot`, then behaves as Subscribe.
     * - Every later client frame carries a client-chosen `request_id`; its
     *   answer (`routing`, `abort`, `tool_result_ack`) or `error` carries the
     *   same id. Answers interleave with chunk batches; the routing answer of a
     *   send that wakes the thread comes before that run's chunks.
     * - A bad frame gets an `error` answer and does not end the stream. A
     *   second `open`, or a frame before `open`, is such an error.
     * - Client tools declared by a run are answered with `tool_result` frames.
     * - Half-closing the client side ends the stream after pending answers;
     *   it never aborts the run. Fell-behind, resume and shutdown behave as in
     *   Subscribe.
     * </pre>
     */
    public io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ConnectRequest> connect(
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ConnectResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          getChannel().newCall(getConnectMethod(), getCallOptions()), responseObserver);
    }

    /**
     * <pre>
     * Aborts the thread's active run. Answers whether a run was aborted.
     * With `run_id` and no `thread_id`, aborts a run that has no thread (a
     * Generate or Stream without memory), for the caller that started it, on
     * the replica that serves it. A run that ended, an unknown id, or another
     * caller's run answers `aborted = false`: a finished run is gone.
     * </pre>
     */
    public void abortRun(io.github.agentd.proto.v1.AbortRunRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.AbortRunResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getAbortRunMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service ThreadService.
   * <pre>
   * Conversation threads: storage, live subscriptions and the bidirectional
   * thread stream.
   * </pre>
   */
  public static final class ThreadServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<ThreadServiceBlockingV2Stub> {
    private ThreadServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ThreadServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ThreadServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS (THREAD_ALREADY_EXISTS) when the id is taken.
     * </pre>
     */
    public io.github.agentd.proto.v1.CreateThreadResponse createThread(io.github.agentd.proto.v1.CreateThreadRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateThreadMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.GetThreadResponse getThread(io.github.agentd.proto.v1.GetThreadRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetThreadMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Threads of a resource, newest first (AIP-158 pagination).
     * </pre>
     */
    public io.github.agentd.proto.v1.ListThreadsResponse listThreads(io.github.agentd.proto.v1.ListThreadsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListThreadsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Updates title and/or metadata per the field mask.
     * </pre>
     */
    public io.github.agentd.proto.v1.UpdateThreadResponse updateThread(io.github.agentd.proto.v1.UpdateThreadRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpdateThreadMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes a thread and its messages.
     * </pre>
     */
    public io.github.agentd.proto.v1.DeleteThreadResponse deleteThread(io.github.agentd.proto.v1.DeleteThreadRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteThreadMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.ListMessagesResponse listMessages(io.github.agentd.proto.v1.ListMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Streams a thread's chunks across runs, one run after another, including
     * signal echoes.
     * Contract:
     * - The first message is always a `snapshot`: the active run id (empty
     *   when idle), the thread's log epoch and the offset of the last chunk in
     *   its log.
     * - Then `chunks` batches follow, in offset order, each batch holding
     *   chunks of one run. Offsets strictly increase; a client must tolerate
     *   gaps in offsets (chunks that are not logged, e.g. of other agents'
     *   internal runs, never take an offset, but a future version may skip
     *   numbers) and must not assume offset == seq.
     * - With `resume`, the server first replays every logged chunk after
     *   `resume.after_offset`, then continues live, with no gap and no
     *   duplicate. A resume whose epoch differs from the thread's, or whose
     *   offset the server no longer holds, fails with OUT_OF_RANGE
     *   (RESUME_OFFSET_EXPIRED): read the history with ListMessages and
     *   subscribe again without resume.
     * - A subscriber that reads too slowly to keep up gets `fell_behind` with
     *   the last offset it was sent; the stream then ends with status OK and
     *   the client resumes after that offset. A slow subscriber never slows
     *   the run or other subscribers.
     * - Ending the stream never aborts the run.
     * - On server shutdown the stream ends with UNAVAILABLE (SERVER_SHUTDOWN);
     *   reconnect and resume.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, io.github.agentd.proto.v1.SubscribeResponse>
        subscribe(io.github.agentd.proto.v1.SubscribeRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getSubscribeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * A bidirectional thread stream: everything Subscribe sends, plus
     * answers to the client's frames.
     * Contract:
     * - The client's first frame must be `open`; the server answers with a
     *   `snapshot`, then behaves as Subscribe.
     * - Every later client frame carries a client-chosen `request_id`; its
     *   answer (`routing`, `abort`, `tool_result_ack`) or `error` carries the
     *   same id. Answers interleave with chunk batches; the routing answer of a
     *   send that wakes the thread comes before that run's chunks.
     * - A bad frame gets an `error` answer and does not end the stream. A
     *   second `open`, or a frame before `open`, is such an error.
     * - Client tools declared by a run are answered with `tool_result` frames.
     * - Half-closing the client side ends the stream after pending answers;
     *   it never aborts the run. Fell-behind, resume and shutdown behave as in
     *   Subscribe.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<io.github.agentd.proto.v1.ConnectRequest, io.github.agentd.proto.v1.ConnectResponse>
        connect() {
      return io.grpc.stub.ClientCalls.blockingBidiStreamingCall(
          getChannel(), getConnectMethod(), getCallOptions());
    }

    /**
     * <pre>
     * Aborts the thread's active run. Answers whether a run was aborted.
     * With `run_id` and no `thread_id`, aborts a run that has no thread (a
     * Generate or Stream without memory), for the caller that started it, on
     * the replica that serves it. A run that ended, an unknown id, or another
     * caller's run answers `aborted = false`: a finished run is gone.
     * </pre>
     */
    public io.github.agentd.proto.v1.AbortRunResponse abortRun(io.github.agentd.proto.v1.AbortRunRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getAbortRunMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service ThreadService.
   * <pre>
   * Conversation threads: storage, live subscriptions and the bidirectional
   * thread stream.
   * </pre>
   */
  public static final class ThreadServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<ThreadServiceBlockingStub> {
    private ThreadServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ThreadServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ThreadServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS (THREAD_ALREADY_EXISTS) when the id is taken.
     * </pre>
     */
    public io.github.agentd.proto.v1.CreateThreadResponse createThread(io.github.agentd.proto.v1.CreateThreadRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateThreadMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.GetThreadResponse getThread(io.github.agentd.proto.v1.GetThreadRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetThreadMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Threads of a resource, newest first (AIP-158 pagination).
     * </pre>
     */
    public io.github.agentd.proto.v1.ListThreadsResponse listThreads(io.github.agentd.proto.v1.ListThreadsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListThreadsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Updates title and/or metadata per the field mask.
     * </pre>
     */
    public io.github.agentd.proto.v1.UpdateThreadResponse updateThread(io.github.agentd.proto.v1.UpdateThreadRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateThreadMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes a thread and its messages.
     * </pre>
     */
    public io.github.agentd.proto.v1.DeleteThreadResponse deleteThread(io.github.agentd.proto.v1.DeleteThreadRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteThreadMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.ListMessagesResponse listMessages(io.github.agentd.proto.v1.ListMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Streams a thread's chunks across runs, one run after another, including
     * signal echoes.
     * Contract:
     * - The first message is always a `snapshot`: the active run id (empty
     *   when idle), the thread's log epoch and the offset of the last chunk in
     *   its log.
     * - Then `chunks` batches follow, in offset order, each batch holding
     *   chunks of one run. Offsets strictly increase; a client must tolerate
     *   gaps in offsets (chunks that are not logged, e.g. of other agents'
     *   internal runs, never take an offset, but a future version may skip
     *   numbers) and must not assume offset == seq.
     * - With `resume`, the server first replays every logged chunk after
     *   `resume.after_offset`, then continues live, with no gap and no
     *   duplicate. A resume whose epoch differs from the thread's, or whose
     *   offset the server no longer holds, fails with OUT_OF_RANGE
     *   (RESUME_OFFSET_EXPIRED): read the history with ListMessages and
     *   subscribe again without resume.
     * - A subscriber that reads too slowly to keep up gets `fell_behind` with
     *   the last offset it was sent; the stream then ends with status OK and
     *   the client resumes after that offset. A slow subscriber never slows
     *   the run or other subscribers.
     * - Ending the stream never aborts the run.
     * - On server shutdown the stream ends with UNAVAILABLE (SERVER_SHUTDOWN);
     *   reconnect and resume.
     * </pre>
     */
    public java.util.Iterator<io.github.agentd.proto.v1.SubscribeResponse> subscribe(
        io.github.agentd.proto.v1.SubscribeRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getSubscribeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Aborts the thread's active run. Answers whether a run was aborted.
     * With `run_id` and no `thread_id`, aborts a run that has no thread (a
     * Generate or Stream without memory), for the caller that started it, on
     * the replica that serves it. A run that ended, an unknown id, or another
     * caller's run answers `aborted = false`: a finished run is gone.
     * </pre>
     */
    public io.github.agentd.proto.v1.AbortRunResponse abortRun(io.github.agentd.proto.v1.AbortRunRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getAbortRunMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service ThreadService.
   * <pre>
   * Conversation threads: storage, live subscriptions and the bidirectional
   * thread stream.
   * </pre>
   */
  public static final class ThreadServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<ThreadServiceFutureStub> {
    private ThreadServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected ThreadServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new ThreadServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * ALREADY_EXISTS (THREAD_ALREADY_EXISTS) when the id is taken.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.CreateThreadResponse> createThread(
        io.github.agentd.proto.v1.CreateThreadRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateThreadMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.GetThreadResponse> getThread(
        io.github.agentd.proto.v1.GetThreadRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetThreadMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Threads of a resource, newest first (AIP-158 pagination).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.ListThreadsResponse> listThreads(
        io.github.agentd.proto.v1.ListThreadsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListThreadsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Updates title and/or metadata per the field mask.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.UpdateThreadResponse> updateThread(
        io.github.agentd.proto.v1.UpdateThreadRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateThreadMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes a thread and its messages.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.DeleteThreadResponse> deleteThread(
        io.github.agentd.proto.v1.DeleteThreadRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteThreadMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.ListMessagesResponse> listMessages(
        io.github.agentd.proto.v1.ListMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Aborts the thread's active run. Answers whether a run was aborted.
     * With `run_id` and no `thread_id`, aborts a run that has no thread (a
     * Generate or Stream without memory), for the caller that started it, on
     * the replica that serves it. A run that ended, an unknown id, or another
     * caller's run answers `aborted = false`: a finished run is gone.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.AbortRunResponse> abortRun(
        io.github.agentd.proto.v1.AbortRunRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getAbortRunMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_CREATE_THREAD = 0;
  private static final int METHODID_GET_THREAD = 1;
  private static final int METHODID_LIST_THREADS = 2;
  private static final int METHODID_UPDATE_THREAD = 3;
  private static final int METHODID_DELETE_THREAD = 4;
  private static final int METHODID_LIST_MESSAGES = 5;
  private static final int METHODID_SUBSCRIBE = 6;
  private static final int METHODID_ABORT_RUN = 7;
  private static final int METHODID_CONNECT = 8;

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
        case METHODID_CREATE_THREAD:
          serviceImpl.createThread((io.github.agentd.proto.v1.CreateThreadRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.CreateThreadResponse>) responseObserver);
          break;
        case METHODID_GET_THREAD:
          serviceImpl.getThread((io.github.agentd.proto.v1.GetThreadRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetThreadResponse>) responseObserver);
          break;
        case METHODID_LIST_THREADS:
          serviceImpl.listThreads((io.github.agentd.proto.v1.ListThreadsRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListThreadsResponse>) responseObserver);
          break;
        case METHODID_UPDATE_THREAD:
          serviceImpl.updateThread((io.github.agentd.proto.v1.UpdateThreadRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateThreadResponse>) responseObserver);
          break;
        case METHODID_DELETE_THREAD:
          serviceImpl.deleteThread((io.github.agentd.proto.v1.DeleteThreadRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteThreadResponse>) responseObserver);
          break;
        case METHODID_LIST_MESSAGES:
          serviceImpl.listMessages((io.github.agentd.proto.v1.ListMessagesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListMessagesResponse>) responseObserver);
          break;
        case METHODID_SUBSCRIBE:
          serviceImpl.subscribe((io.github.agentd.proto.v1.SubscribeRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SubscribeResponse>) responseObserver);
          break;
        case METHODID_ABORT_RUN:
          serviceImpl.abortRun((io.github.agentd.proto.v1.AbortRunRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.AbortRunResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_CONNECT:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.connect(
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ConnectResponse>) responseObserver);
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getCreateThreadMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.CreateThreadRequest,
              io.github.agentd.proto.v1.CreateThreadResponse>(
                service, METHODID_CREATE_THREAD)))
        .addMethod(
          getGetThreadMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.GetThreadRequest,
              io.github.agentd.proto.v1.GetThreadResponse>(
                service, METHODID_GET_THREAD)))
        .addMethod(
          getListThreadsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ListThreadsRequest,
              io.github.agentd.proto.v1.ListThreadsResponse>(
                service, METHODID_LIST_THREADS)))
        .addMethod(
          getUpdateThreadMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.UpdateThreadRequest,
              io.github.agentd.proto.v1.UpdateThreadResponse>(
                service, METHODID_UPDATE_THREAD)))
        .addMethod(
          getDeleteThreadMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.DeleteThreadRequest,
              io.github.agentd.proto.v1.DeleteThreadResponse>(
                service, METHODID_DELETE_THREAD)))
        .addMethod(
          getListMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ListMessagesRequest,
              io.github.agentd.proto.v1.ListMessagesResponse>(
                service, METHODID_LIST_MESSAGES)))
        .addMethod(
          getSubscribeMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.SubscribeRequest,
              io.github.agentd.proto.v1.SubscribeResponse>(
                service, METHODID_SUBSCRIBE)))
        .addMethod(
          getConnectMethod(),
          io.grpc.stub.ServerCalls.asyncBidiStreamingCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ConnectRequest,
              io.github.agentd.proto.v1.ConnectResponse>(
                service, METHODID_CONNECT)))
        .addMethod(
          getAbortRunMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.AbortRunRequest,
              io.github.agentd.proto.v1.AbortRunResponse>(
                service, METHODID_ABORT_RUN)))
        .build();
  }

  private static abstract class ThreadServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    ThreadServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.github.agentd.proto.v1.ThreadServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("ThreadService");
    }
  }

  private static final class ThreadServiceFileDescriptorSupplier
      extends ThreadServiceBaseDescriptorSupplier {
    ThreadServiceFileDescriptorSupplier() {}
  }

  private static final class ThreadServiceMethodDescriptorSupplier
      extends ThreadServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    ThreadServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (ThreadServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new ThreadServiceFileDescriptorSupplier())
              .addMethod(getCreateThreadMethod())
              .addMethod(getGetThreadMethod())
              .addMethod(getListThreadsMethod())
              .addMethod(getUpdateThreadMethod())
              .addMethod(getDeleteThreadMethod())
              .addMethod(getListMessagesMethod())
              .addMethod(getSubscribeMethod())
              .addMethod(getConnectMethod())
              .addMethod(getAbortRunMethod())
              .build();
        }
      }
    }
    return result;
  }
}
