package io.github.agentd.proto.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Pushes messages, signals and notifications into threads.
 * Every send answers the routing decision once it is made. A deliver or
 * persist answer for a non-transient signal is sent only after the signal is
 * committed to storage. A run started by a wake belongs to the server: it
 * goes on when the caller goes away; read it with ThreadService.Subscribe
 * (subscribe first) or send through ThreadService.Connect.
 * A signal for a thread whose active run belongs to another agent is never
 * delivered into that run: it waits, as a queued run of its own (answered
 * `deliver` with the queued run's id), until that run ends. Naming that run
 * in `target.run_id` is FAILED_PRECONDITION THREAD_BUSY.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class SignalServiceGrpc {

  private SignalServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "agentd.v1.SignalService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendMessageRequest,
      io.github.agentd.proto.v1.SendMessageResponse> getSendMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendMessage",
      requestType = io.github.agentd.proto.v1.SendMessageRequest.class,
      responseType = io.github.agentd.proto.v1.SendMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendMessageRequest,
      io.github.agentd.proto.v1.SendMessageResponse> getSendMessageMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendMessageRequest, io.github.agentd.proto.v1.SendMessageResponse> getSendMessageMethod;
    if ((getSendMessageMethod = SignalServiceGrpc.getSendMessageMethod) == null) {
      synchronized (SignalServiceGrpc.class) {
        if ((getSendMessageMethod = SignalServiceGrpc.getSendMessageMethod) == null) {
          SignalServiceGrpc.getSendMessageMethod = getSendMessageMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.SendMessageRequest, io.github.agentd.proto.v1.SendMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SendMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SendMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SignalServiceMethodDescriptorSupplier("SendMessage"))
              .build();
        }
      }
    }
    return getSendMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.QueueMessageRequest,
      io.github.agentd.proto.v1.QueueMessageResponse> getQueueMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "QueueMessage",
      requestType = io.github.agentd.proto.v1.QueueMessageRequest.class,
      responseType = io.github.agentd.proto.v1.QueueMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.QueueMessageRequest,
      io.github.agentd.proto.v1.QueueMessageResponse> getQueueMessageMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.QueueMessageRequest, io.github.agentd.proto.v1.QueueMessageResponse> getQueueMessageMethod;
    if ((getQueueMessageMethod = SignalServiceGrpc.getQueueMessageMethod) == null) {
      synchronized (SignalServiceGrpc.class) {
        if ((getQueueMessageMethod = SignalServiceGrpc.getQueueMessageMethod) == null) {
          SignalServiceGrpc.getQueueMessageMethod = getQueueMessageMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.QueueMessageRequest, io.github.agentd.proto.v1.QueueMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "QueueMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.QueueMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.QueueMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SignalServiceMethodDescriptorSupplier("QueueMessage"))
              .build();
        }
      }
    }
    return getQueueMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendSignalRequest,
      io.github.agentd.proto.v1.SendSignalResponse> getSendSignalMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendSignal",
      requestType = io.github.agentd.proto.v1.SendSignalRequest.class,
      responseType = io.github.agentd.proto.v1.SendSignalResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendSignalRequest,
      io.github.agentd.proto.v1.SendSignalResponse> getSendSignalMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendSignalRequest, io.github.agentd.proto.v1.SendSignalResponse> getSendSignalMethod;
    if ((getSendSignalMethod = SignalServiceGrpc.getSendSignalMethod) == null) {
      synchronized (SignalServiceGrpc.class) {
        if ((getSendSignalMethod = SignalServiceGrpc.getSendSignalMethod) == null) {
          SignalServiceGrpc.getSendSignalMethod = getSendSignalMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.SendSignalRequest, io.github.agentd.proto.v1.SendSignalResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendSignal"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SendSignalRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SendSignalResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SignalServiceMethodDescriptorSupplier("SendSignal"))
              .build();
        }
      }
    }
    return getSendSignalMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendStateSignalRequest,
      io.github.agentd.proto.v1.SendStateSignalResponse> getSendStateSignalMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendStateSignal",
      requestType = io.github.agentd.proto.v1.SendStateSignalRequest.class,
      responseType = io.github.agentd.proto.v1.SendStateSignalResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendStateSignalRequest,
      io.github.agentd.proto.v1.SendStateSignalResponse> getSendStateSignalMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendStateSignalRequest, io.github.agentd.proto.v1.SendStateSignalResponse> getSendStateSignalMethod;
    if ((getSendStateSignalMethod = SignalServiceGrpc.getSendStateSignalMethod) == null) {
      synchronized (SignalServiceGrpc.class) {
        if ((getSendStateSignalMethod = SignalServiceGrpc.getSendStateSignalMethod) == null) {
          SignalServiceGrpc.getSendStateSignalMethod = getSendStateSignalMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.SendStateSignalRequest, io.github.agentd.proto.v1.SendStateSignalResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendStateSignal"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SendStateSignalRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SendStateSignalResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SignalServiceMethodDescriptorSupplier("SendStateSignal"))
              .build();
        }
      }
    }
    return getSendStateSignalMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendNotificationRequest,
      io.github.agentd.proto.v1.SendNotificationResponse> getSendNotificationMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendNotification",
      requestType = io.github.agentd.proto.v1.SendNotificationRequest.class,
      responseType = io.github.agentd.proto.v1.SendNotificationResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendNotificationRequest,
      io.github.agentd.proto.v1.SendNotificationResponse> getSendNotificationMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SendNotificationRequest, io.github.agentd.proto.v1.SendNotificationResponse> getSendNotificationMethod;
    if ((getSendNotificationMethod = SignalServiceGrpc.getSendNotificationMethod) == null) {
      synchronized (SignalServiceGrpc.class) {
        if ((getSendNotificationMethod = SignalServiceGrpc.getSendNotificationMethod) == null) {
          SignalServiceGrpc.getSendNotificationMethod = getSendNotificationMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.SendNotificationRequest, io.github.agentd.proto.v1.SendNotificationResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendNotification"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SendNotificationRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SendNotificationResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SignalServiceMethodDescriptorSupplier("SendNotification"))
              .build();
        }
      }
    }
    return getSendNotificationMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListNotificationsRequest,
      io.github.agentd.proto.v1.ListNotificationsResponse> getListNotificationsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListNotifications",
      requestType = io.github.agentd.proto.v1.ListNotificationsRequest.class,
      responseType = io.github.agentd.proto.v1.ListNotificationsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListNotificationsRequest,
      io.github.agentd.proto.v1.ListNotificationsResponse> getListNotificationsMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListNotificationsRequest, io.github.agentd.proto.v1.ListNotificationsResponse> getListNotificationsMethod;
    if ((getListNotificationsMethod = SignalServiceGrpc.getListNotificationsMethod) == null) {
      synchronized (SignalServiceGrpc.class) {
        if ((getListNotificationsMethod = SignalServiceGrpc.getListNotificationsMethod) == null) {
          SignalServiceGrpc.getListNotificationsMethod = getListNotificationsMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ListNotificationsRequest, io.github.agentd.proto.v1.ListNotificationsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListNotifications"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListNotificationsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListNotificationsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SignalServiceMethodDescriptorSupplier("ListNotifications"))
              .build();
        }
      }
    }
    return getListNotificationsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateNotificationStatusRequest,
      io.github.agentd.proto.v1.UpdateNotificationStatusResponse> getUpdateNotificationStatusMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateNotificationStatus",
      requestType = io.github.agentd.proto.v1.UpdateNotificationStatusRequest.class,
      responseType = io.github.agentd.proto.v1.UpdateNotificationStatusResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateNotificationStatusRequest,
      io.github.agentd.proto.v1.UpdateNotificationStatusResponse> getUpdateNotificationStatusMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateNotificationStatusRequest, io.github.agentd.proto.v1.UpdateNotificationStatusResponse> getUpdateNotificationStatusMethod;
    if ((getUpdateNotificationStatusMethod = SignalServiceGrpc.getUpdateNotificationStatusMethod) == null) {
      synchronized (SignalServiceGrpc.class) {
        if ((getUpdateNotificationStatusMethod = SignalServiceGrpc.getUpdateNotificationStatusMethod) == null) {
          SignalServiceGrpc.getUpdateNotificationStatusMethod = getUpdateNotificationStatusMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.UpdateNotificationStatusRequest, io.github.agentd.proto.v1.UpdateNotificationStatusResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateNotificationStatus"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.UpdateNotificationStatusRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.UpdateNotificationStatusResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SignalServiceMethodDescriptorSupplier("UpdateNotificationStatus"))
              .build();
        }
      }
    }
    return getUpdateNotificationStatusMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static SignalServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SignalServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SignalServiceStub>() {
        @java.lang.Override
        public SignalServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SignalServiceStub(channel, callOptions);
        }
      };
    return SignalServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static SignalServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SignalServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SignalServiceBlockingV2Stub>() {
        @java.lang.Override
        public SignalServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SignalServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return SignalServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static SignalServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SignalServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SignalServiceBlockingStub>() {
        @java.lang.Override
        public SignalServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SignalServiceBlockingStub(channel, callOptions);
        }
      };
    return SignalServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static SignalServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SignalServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SignalServiceFutureStub>() {
        @java.lang.Override
        public SignalServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SignalServiceFutureStub(channel, callOptions);
        }
      };
    return SignalServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Pushes messages, signals and notifications into threads.
   * Every send answers the routing decision once it is made. A deliver or
   * persist answer for a non-transient signal is sent only after the signal is
   * committed to storage. A run started by a wake belongs to the server: it
   * goes on when the caller goes away; read it with ThreadService.Subscribe
   * (subscribe first) or send through ThreadService.Connect.
   * A signal for a thread whose active run belongs to another agent is never
   * delivered into that run: it waits, as a queued run of its own (answered
   * `deliver` with the queued run's id), until that run ends. Naming that run
   * in `target.run_id` is FAILED_PRECONDITION THREAD_BUSY.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Sends a user message: delivered into the active run, or wakes an idle
     * thread.
     * </pre>
     */
    default void sendMessage(io.github.agentd.proto.v1.SendMessageRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * Queues a user message for the thread's next turn: runs start in order,
     * one at a time per thread; on an idle thread the run starts at once.
     * </pre>
     */
    default void queueMessage(io.github.agentd.proto.v1.QueueMessageRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.QueueMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getQueueMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * Sends a signal of any type.
     * </pre>
     */
    default void sendSignal(io.github.agentd.proto.v1.SendSignalRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendSignalResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendSignalMethod(), responseObserver);
    }

    /**
     * <pre>
     * Sends named thread state; skipped when unchanged.
     * </pre>
     */
    default void sendStateSignal(io.github.agentd.proto.v1.SendStateSignalRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendStateSignalResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendStateSignalMethod(), responseObserver);
    }

    /**
     * <pre>
     * Creates (or merges) a notification inbox record and applies the agent's
     * delivery policy.
     * </pre>
     */
    default void sendNotification(io.github.agentd.proto.v1.SendNotificationRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendNotificationResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendNotificationMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists a thread's notification records, newest update first.
     * </pre>
     */
    default void listNotifications(io.github.agentd.proto.v1.ListNotificationsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListNotificationsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListNotificationsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Marks a notification seen, dismissed or archived.
     * </pre>
     */
    default void updateNotificationStatus(io.github.agentd.proto.v1.UpdateNotificationStatusRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateNotificationStatusResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateNotificationStatusMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service SignalService.
   * <pre>
   * Pushes messages, signals and notifications into threads.
   * Every send answers the routing decision once it is made. A deliver or
   * persist answer for a non-transient signal is sent only after the signal is
   * committed to storage. A run started by a wake belongs to the server: it
   * goes on when the caller goes away; read it with ThreadService.Subscribe
   * (subscribe first) or send through ThreadService.Connect.
   * A signal for a thread whose active run belongs to another agent is never
   * delivered into that run: it waits, as a queued run of its own (answered
   * `deliver` with the queued run's id), until that run ends. Naming that run
   * in `target.run_id` is FAILED_PRECONDITION THREAD_BUSY.
   * </pre>
   */
  public static abstract class SignalServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return SignalServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service SignalService.
   * <pre>
   * Pushes messages, signals and notifications into threads.
   * Every send answers the routing decision once it is made. A deliver or
   * persist answer for a non-transient signal is sent only after the signal is
   * committed to storage. A run started by a wake belongs to the server: it
   * goes on when the caller goes away; read it with ThreadService.Subscribe
   * (subscribe first) or send through ThreadService.Connect.
   * A signal for a thread whose active run belongs to another agent is never
   * delivered into that run: it waits, as a queued run of its own (answered
   * `deliver` with the queued run's id), until that run ends. Naming that run
   * in `target.run_id` is FAILED_PRECONDITION THREAD_BUSY.
   * </pre>
   */
  public static final class SignalServiceStub
      extends io.grpc.stub.AbstractAsyncStub<SignalServiceStub> {
    private SignalServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SignalServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SignalServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Sends a user message: delivered into the active run, or wakes an idle
     * thread.
     * </pre>
     */
    public void sendMessage(io.github.agentd.proto.v1.SendMessageRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Queues a user message for the thread's next turn: runs start in order,
     * one at a time per thread; on an idle thread the run starts at once.
     * </pre>
     */
    public void queueMessage(io.github.agentd.proto.v1.QueueMessageRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.QueueMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getQueueMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Sends a signal of any type.
     * </pre>
     */
    public void sendSignal(io.github.agentd.proto.v1.SendSignalRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendSignalResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendSignalMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Sends named thread state; skipped when unchanged.
     * </pre>
     */
    public void sendStateSignal(io.github.agentd.proto.v1.SendStateSignalRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendStateSignalResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendStateSignalMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Creates (or merges) a notification inbox record and applies the agent's
     * delivery policy.
     * </pre>
     */
    public void sendNotification(io.github.agentd.proto.v1.SendNotificationRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendNotificationResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendNotificationMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists a thread's notification records, newest update first.
     * </pre>
     */
    public void listNotifications(io.github.agentd.proto.v1.ListNotificationsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListNotificationsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListNotificationsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Marks a notification seen, dismissed or archived.
     * </pre>
     */
    public void updateNotificationStatus(io.github.agentd.proto.v1.UpdateNotificationStatusRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateNotificationStatusResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateNotificationStatusMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service SignalService.
   * <pre>
   * Pushes messages, signals and notifications into threads.
   * Every send answers the routing decision once it is made. A deliver or
   * persist answer for a non-transient signal is sent only after the signal is
   * committed to storage. A run started by a wake belongs to the server: it
   * goes on when the caller goes away; read it with ThreadService.Subscribe
   * (subscribe first) or send through ThreadService.Connect.
   * A signal for a thread whose active run belongs to another agent is never
   * delivered into that run: it waits, as a queued run of its own (answered
   * `deliver` with the queued run's id), until that run ends. Naming that run
   * in `target.run_id` is FAILED_PRECONDITION THREAD_BUSY.
   * </pre>
   */
  public static final class SignalServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<SignalServiceBlockingV2Stub> {
    private SignalServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SignalServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SignalServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Sends a user message: delivered into the active run, or wakes an idle
     * thread.
     * </pre>
     */
    public io.github.agentd.proto.v1.SendMessageResponse sendMessage(io.github.agentd.proto.v1.SendMessageRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSendMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Queues a user message for the thread's next turn: runs start in order,
     * one at a time per thread; on an idle thread the run starts at once.
     * </pre>
     */
    public io.github.agentd.proto.v1.QueueMessageResponse queueMessage(io.github.agentd.proto.v1.QueueMessageRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getQueueMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sends a signal of any type.
     * </pre>
     */
    public io.github.agentd.proto.v1.SendSignalResponse sendSignal(io.github.agentd.proto.v1.SendSignalRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSendSignalMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sends named thread state; skipped when unchanged.
     * </pre>
     */
    public io.github.agentd.proto.v1.SendStateSignalResponse sendStateSignal(io.github.agentd.proto.v1.SendStateSignalRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSendStateSignalMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Creates (or merges) a notification inbox record and applies the agent's
     * delivery policy.
     * </pre>
     */
    public io.github.agentd.proto.v1.SendNotificationResponse sendNotification(io.github.agentd.proto.v1.SendNotificationRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSendNotificationMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists a thread's notification records, newest update first.
     * </pre>
     */
    public io.github.agentd.proto.v1.ListNotificationsResponse listNotifications(io.github.agentd.proto.v1.ListNotificationsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListNotificationsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Marks a notification seen, dismissed or archived.
     * </pre>
     */
    public io.github.agentd.proto.v1.UpdateNotificationStatusResponse updateNotificationStatus(io.github.agentd.proto.v1.UpdateNotificationStatusRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpdateNotificationStatusMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service SignalService.
   * <pre>
   * Pushes messages, signals and notifications into threads.
   * Every send answers the routing decision once it is made. A deliver or
   * persist answer for a non-transient signal is sent only after the signal is
   * committed to storage. A run started by a wake belongs to the server: it
   * goes on when the caller goes away; read it with ThreadService.Subscribe
   * (subscribe first) or send through ThreadService.Connect.
   * A signal for a thread whose active run belongs to another agent is never
   * delivered into that run: it waits, as a queued run of its own (answered
   * `deliver` with the queued run's id), until that run ends. Naming that run
   * in `target.run_id` is FAILED_PRECONDITION THREAD_BUSY.
   * </pre>
   */
  public static final class SignalServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<SignalServiceBlockingStub> {
    private SignalServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SignalServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SignalServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Sends a user message: delivered into the active run, or wakes an idle
     * thread.
     * </pre>
     */
    public io.github.agentd.proto.v1.SendMessageResponse sendMessage(io.github.agentd.proto.v1.SendMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Queues a user message for the thread's next turn: runs start in order,
     * one at a time per thread; on an idle thread the run starts at once.
     * </pre>
     */
    public io.github.agentd.proto.v1.QueueMessageResponse queueMessage(io.github.agentd.proto.v1.QueueMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getQueueMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sends a signal of any type.
     * </pre>
     */
    public io.github.agentd.proto.v1.SendSignalResponse sendSignal(io.github.agentd.proto.v1.SendSignalRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendSignalMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sends named thread state; skipped when unchanged.
     * </pre>
     */
    public io.github.agentd.proto.v1.SendStateSignalResponse sendStateSignal(io.github.agentd.proto.v1.SendStateSignalRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendStateSignalMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Creates (or merges) a notification inbox record and applies the agent's
     * delivery policy.
     * </pre>
     */
    public io.github.agentd.proto.v1.SendNotificationResponse sendNotification(io.github.agentd.proto.v1.SendNotificationRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendNotificationMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists a thread's notification records, newest update first.
     * </pre>
     */
    public io.github.agentd.proto.v1.ListNotificationsResponse listNotifications(io.github.agentd.proto.v1.ListNotificationsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListNotificationsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Marks a notification seen, dismissed or archived.
     * </pre>
     */
    public io.github.agentd.proto.v1.UpdateNotificationStatusResponse updateNotificationStatus(io.github.agentd.proto.v1.UpdateNotificationStatusRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateNotificationStatusMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service SignalService.
   * <pre>
   * Pushes messages, signals and notifications into threads.
   * Every send answers the routing decision once it is made. A deliver or
   * persist answer for a non-transient signal is sent only after the signal is
   * committed to storage. A run started by a wake belongs to the server: it
   * goes on when the caller goes away; read it with ThreadService.Subscribe
   * (subscribe first) or send through ThreadService.Connect.
   * A signal for a thread whose active run belongs to another agent is never
   * delivered into that run: it waits, as a queued run of its own (answered
   * `deliver` with the queued run's id), until that run ends. Naming that run
   * in `target.run_id` is FAILED_PRECONDITION THREAD_BUSY.
   * </pre>
   */
  public static final class SignalServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<SignalServiceFutureStub> {
    private SignalServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SignalServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SignalServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Sends a user message: delivered into the active run, or wakes an idle
     * thread.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.SendMessageResponse> sendMessage(
        io.github.agentd.proto.v1.SendMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Queues a user message for the thread's next turn: runs start in order,
     * one at a time per thread; on an idle thread the run starts at once.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.QueueMessageResponse> queueMessage(
        io.github.agentd.proto.v1.QueueMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getQueueMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Sends a signal of any type.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.SendSignalResponse> sendSignal(
        io.github.agentd.proto.v1.SendSignalRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendSignalMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Sends named thread state; skipped when unchanged.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.SendStateSignalResponse> sendStateSignal(
        io.github.agentd.proto.v1.SendStateSignalRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendStateSignalMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Creates (or merges) a notification inbox record and applies the agent's
     * delivery policy.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.SendNotificationResponse> sendNotification(
        io.github.agentd.proto.v1.SendNotificationRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendNotificationMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists a thread's notification records, newest update first.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.ListNotificationsResponse> listNotifications(
        io.github.agentd.proto.v1.ListNotificationsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListNotificationsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Marks a notification seen, dismissed or archived.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.UpdateNotificationStatusResponse> updateNotificationStatus(
        io.github.agentd.proto.v1.UpdateNotificationStatusRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateNotificationStatusMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SEND_MESSAGE = 0;
  private static final int METHODID_QUEUE_MESSAGE = 1;
  private static final int METHODID_SEND_SIGNAL = 2;
  private static final int METHODID_SEND_STATE_SIGNAL = 3;
  private static final int METHODID_SEND_NOTIFICATION = 4;
  private static final int METHODID_LIST_NOTIFICATIONS = 5;
  private static final int METHODID_UPDATE_NOTIFICATION_STATUS = 6;

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
        case METHODID_SEND_MESSAGE:
          serviceImpl.sendMessage((io.github.agentd.proto.v1.SendMessageRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendMessageResponse>) responseObserver);
          break;
        case METHODID_QUEUE_MESSAGE:
          serviceImpl.queueMessage((io.github.agentd.proto.v1.QueueMessageRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.QueueMessageResponse>) responseObserver);
          break;
        case METHODID_SEND_SIGNAL:
          serviceImpl.sendSignal((io.github.agentd.proto.v1.SendSignalRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendSignalResponse>) responseObserver);
          break;
        case METHODID_SEND_STATE_SIGNAL:
          serviceImpl.sendStateSignal((io.github.agentd.proto.v1.SendStateSignalRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendStateSignalResponse>) responseObserver);
          break;
        case METHODID_SEND_NOTIFICATION:
          serviceImpl.sendNotification((io.github.agentd.proto.v1.SendNotificationRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SendNotificationResponse>) responseObserver);
          break;
        case METHODID_LIST_NOTIFICATIONS:
          serviceImpl.listNotifications((io.github.agentd.proto.v1.ListNotificationsRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListNotificationsResponse>) responseObserver);
          break;
        case METHODID_UPDATE_NOTIFICATION_STATUS:
          serviceImpl.updateNotificationStatus((io.github.agentd.proto.v1.UpdateNotificationStatusRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateNotificationStatusResponse>) responseObserver);
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
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getSendMessageMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.SendMessageRequest,
              io.github.agentd.proto.v1.SendMessageResponse>(
                service, METHODID_SEND_MESSAGE)))
        .addMethod(
          getQueueMessageMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.QueueMessageRequest,
              io.github.agentd.proto.v1.QueueMessageResponse>(
                service, METHODID_QUEUE_MESSAGE)))
        .addMethod(
          getSendSignalMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.SendSignalRequest,
              io.github.agentd.proto.v1.SendSignalResponse>(
                service, METHODID_SEND_SIGNAL)))
        .addMethod(
          getSendStateSignalMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.SendStateSignalRequest,
              io.github.agentd.proto.v1.SendStateSignalResponse>(
                service, METHODID_SEND_STATE_SIGNAL)))
        .addMethod(
          getSendNotificationMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.SendNotificationRequest,
              io.github.agentd.proto.v1.SendNotificationResponse>(
                service, METHODID_SEND_NOTIFICATION)))
        .addMethod(
          getListNotificationsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ListNotificationsRequest,
              io.github.agentd.proto.v1.ListNotificationsResponse>(
                service, METHODID_LIST_NOTIFICATIONS)))
        .addMethod(
          getUpdateNotificationStatusMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.UpdateNotificationStatusRequest,
              io.github.agentd.proto.v1.UpdateNotificationStatusResponse>(
                service, METHODID_UPDATE_NOTIFICATION_STATUS)))
        .build();
  }

  private static abstract class SignalServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    SignalServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.github.agentd.proto.v1.SignalServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("SignalService");
    }
  }

  private static final class SignalServiceFileDescriptorSupplier
      extends SignalServiceBaseDescriptorSupplier {
    SignalServiceFileDescriptorSupplier() {}
  }

  private static final class SignalServiceMethodDescriptorSupplier
      extends SignalServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    SignalServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (SignalServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new SignalServiceFileDescriptorSupplier())
              .addMethod(getSendMessageMethod())
              .addMethod(getQueueMessageMethod())
              .addMethod(getSendSignalMethod())
              .addMethod(getSendStateSignalMethod())
              .addMethod(getSendNotificationMethod())
              .addMethod(getListNotificationsMethod())
              .addMethod(getUpdateNotificationStatusMethod())
              .build();
        }
      }
    }
    return result;
  }
}
