package io.github.agentd.proto.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * The server cache (in-memory or Redis) as an operable thing.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class CacheServiceGrpc {

  private CacheServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "agentd.v1.CacheService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetCacheEntryRequest,
      io.github.agentd.proto.v1.GetCacheEntryResponse> getGetCacheEntryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetCacheEntry",
      requestType = io.github.agentd.proto.v1.GetCacheEntryRequest.class,
      responseType = io.github.agentd.proto.v1.GetCacheEntryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetCacheEntryRequest,
      io.github.agentd.proto.v1.GetCacheEntryResponse> getGetCacheEntryMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetCacheEntryRequest, io.github.agentd.proto.v1.GetCacheEntryResponse> getGetCacheEntryMethod;
    if ((getGetCacheEntryMethod = CacheServiceGrpc.getGetCacheEntryMethod) == null) {
      synchronized (CacheServiceGrpc.class) {
        if ((getGetCacheEntryMethod = CacheServiceGrpc.getGetCacheEntryMethod) == null) {
          CacheServiceGrpc.getGetCacheEntryMethod = getGetCacheEntryMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.GetCacheEntryRequest, io.github.agentd.proto.v1.GetCacheEntryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetCacheEntry"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetCacheEntryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetCacheEntryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CacheServiceMethodDescriptorSupplier("GetCacheEntry"))
              .build();
        }
      }
    }
    return getGetCacheEntryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SetCacheEntryRequest,
      io.github.agentd.proto.v1.SetCacheEntryResponse> getSetCacheEntryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SetCacheEntry",
      requestType = io.github.agentd.proto.v1.SetCacheEntryRequest.class,
      responseType = io.github.agentd.proto.v1.SetCacheEntryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SetCacheEntryRequest,
      io.github.agentd.proto.v1.SetCacheEntryResponse> getSetCacheEntryMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.SetCacheEntryRequest, io.github.agentd.proto.v1.SetCacheEntryResponse> getSetCacheEntryMethod;
    if ((getSetCacheEntryMethod = CacheServiceGrpc.getSetCacheEntryMethod) == null) {
      synchronized (CacheServiceGrpc.class) {
        if ((getSetCacheEntryMethod = CacheServiceGrpc.getSetCacheEntryMethod) == null) {
          CacheServiceGrpc.getSetCacheEntryMethod = getSetCacheEntryMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.SetCacheEntryRequest, io.github.agentd.proto.v1.SetCacheEntryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SetCacheEntry"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SetCacheEntryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.SetCacheEntryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CacheServiceMethodDescriptorSupplier("SetCacheEntry"))
              .build();
        }
      }
    }
    return getSetCacheEntryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteCacheEntryRequest,
      io.github.agentd.proto.v1.DeleteCacheEntryResponse> getDeleteCacheEntryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteCacheEntry",
      requestType = io.github.agentd.proto.v1.DeleteCacheEntryRequest.class,
      responseType = io.github.agentd.proto.v1.DeleteCacheEntryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteCacheEntryRequest,
      io.github.agentd.proto.v1.DeleteCacheEntryResponse> getDeleteCacheEntryMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteCacheEntryRequest, io.github.agentd.proto.v1.DeleteCacheEntryResponse> getDeleteCacheEntryMethod;
    if ((getDeleteCacheEntryMethod = CacheServiceGrpc.getDeleteCacheEntryMethod) == null) {
      synchronized (CacheServiceGrpc.class) {
        if ((getDeleteCacheEntryMethod = CacheServiceGrpc.getDeleteCacheEntryMethod) == null) {
          CacheServiceGrpc.getDeleteCacheEntryMethod = getDeleteCacheEntryMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.DeleteCacheEntryRequest, io.github.agentd.proto.v1.DeleteCacheEntryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteCacheEntry"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.DeleteCacheEntryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.DeleteCacheEntryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CacheServiceMethodDescriptorSupplier("DeleteCacheEntry"))
              .build();
        }
      }
    }
    return getDeleteCacheEntryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ClearCacheRequest,
      io.github.agentd.proto.v1.ClearCacheResponse> getClearCacheMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ClearCache",
      requestType = io.github.agentd.proto.v1.ClearCacheRequest.class,
      responseType = io.github.agentd.proto.v1.ClearCacheResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ClearCacheRequest,
      io.github.agentd.proto.v1.ClearCacheResponse> getClearCacheMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ClearCacheRequest, io.github.agentd.proto.v1.ClearCacheResponse> getClearCacheMethod;
    if ((getClearCacheMethod = CacheServiceGrpc.getClearCacheMethod) == null) {
      synchronized (CacheServiceGrpc.class) {
        if ((getClearCacheMethod = CacheServiceGrpc.getClearCacheMethod) == null) {
          CacheServiceGrpc.getClearCacheMethod = getClearCacheMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ClearCacheRequest, io.github.agentd.proto.v1.ClearCacheResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ClearCache"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ClearCacheRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ClearCacheResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CacheServiceMethodDescriptorSupplier("ClearCache"))
              .build();
        }
      }
    }
    return getClearCacheMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetCacheStatsRequest,
      io.github.agentd.proto.v1.GetCacheStatsResponse> getGetCacheStatsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetCacheStats",
      requestType = io.github.agentd.proto.v1.GetCacheStatsRequest.class,
      responseType = io.github.agentd.proto.v1.GetCacheStatsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetCacheStatsRequest,
      io.github.agentd.proto.v1.GetCacheStatsResponse> getGetCacheStatsMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetCacheStatsRequest, io.github.agentd.proto.v1.GetCacheStatsResponse> getGetCacheStatsMethod;
    if ((getGetCacheStatsMethod = CacheServiceGrpc.getGetCacheStatsMethod) == null) {
      synchronized (CacheServiceGrpc.class) {
        if ((getGetCacheStatsMethod = CacheServiceGrpc.getGetCacheStatsMethod) == null) {
          CacheServiceGrpc.getGetCacheStatsMethod = getGetCacheStatsMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.GetCacheStatsRequest, io.github.agentd.proto.v1.GetCacheStatsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetCacheStats"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetCacheStatsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetCacheStatsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CacheServiceMethodDescriptorSupplier("GetCacheStats"))
              .build();
        }
      }
    }
    return getGetCacheStatsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.InvalidateResponseCacheRequest,
      io.github.agentd.proto.v1.InvalidateResponseCacheResponse> getInvalidateResponseCacheMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "InvalidateResponseCache",
      requestType = io.github.agentd.proto.v1.InvalidateResponseCacheRequest.class,
      responseType = io.github.agentd.proto.v1.InvalidateResponseCacheResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.InvalidateResponseCacheRequest,
      io.github.agentd.proto.v1.InvalidateResponseCacheResponse> getInvalidateResponseCacheMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.InvalidateResponseCacheRequest, io.github.agentd.proto.v1.InvalidateResponseCacheResponse> getInvalidateResponseCacheMethod;
    if ((getInvalidateResponseCacheMethod = CacheServiceGrpc.getInvalidateResponseCacheMethod) == null) {
      synchronized (CacheServiceGrpc.class) {
        if ((getInvalidateResponseCacheMethod = CacheServiceGrpc.getInvalidateResponseCacheMethod) == null) {
          CacheServiceGrpc.getInvalidateResponseCacheMethod = getInvalidateResponseCacheMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.InvalidateResponseCacheRequest, io.github.agentd.proto.v1.InvalidateResponseCacheResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "InvalidateResponseCache"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.InvalidateResponseCacheRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.InvalidateResponseCacheResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CacheServiceMethodDescriptorSupplier("InvalidateResponseCache"))
              .build();
        }
      }
    }
    return getInvalidateResponseCacheMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static CacheServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<CacheServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<CacheServiceStub>() {
        @java.lang.Override
        public CacheServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new CacheServiceStub(channel, callOptions);
        }
      };
    return CacheServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static CacheServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<CacheServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<CacheServiceBlockingV2Stub>() {
        @java.lang.Override
        public CacheServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new CacheServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return CacheServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static CacheServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<CacheServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<CacheServiceBlockingStub>() {
        @java.lang.Override
        public CacheServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new CacheServiceBlockingStub(channel, callOptions);
        }
      };
    return CacheServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static CacheServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<CacheServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<CacheServiceFutureStub>() {
        @java.lang.Override
        public CacheServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new CacheServiceFutureStub(channel, callOptions);
        }
      };
    return CacheServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * The server cache (in-memory or Redis) as an operable thing.
   * </pre>
   */
  public interface AsyncService {

    /**
     */
    default void getCacheEntry(io.github.agentd.proto.v1.GetCacheEntryRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetCacheEntryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetCacheEntryMethod(), responseObserver);
    }

    /**
     */
    default void setCacheEntry(io.github.agentd.proto.v1.SetCacheEntryRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SetCacheEntryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSetCacheEntryMethod(), responseObserver);
    }

    /**
     */
    default void deleteCacheEntry(io.github.agentd.proto.v1.DeleteCacheEntryRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteCacheEntryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteCacheEntryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes every key starting with a prefix.
     * </pre>
     */
    default void clearCache(io.github.agentd.proto.v1.ClearCacheRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ClearCacheResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getClearCacheMethod(), responseObserver);
    }

    /**
     */
    default void getCacheStats(io.github.agentd.proto.v1.GetCacheStatsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetCacheStatsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetCacheStatsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes the response-cache entries of an agent id (default-derived keys
     * only), optionally of one scope.
     * </pre>
     */
    default void invalidateResponseCache(io.github.agentd.proto.v1.InvalidateResponseCacheRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.InvalidateResponseCacheResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getInvalidateResponseCacheMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service CacheService.
   * <pre>
   * The server cache (in-memory or Redis) as an operable thing.
   * </pre>
   */
  public static abstract class CacheServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return CacheServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service CacheService.
   * <pre>
   * The server cache (in-memory or Redis) as an operable thing.
   * </pre>
   */
  public static final class CacheServiceStub
      extends io.grpc.stub.AbstractAsyncStub<CacheServiceStub> {
    private CacheServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected CacheServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new CacheServiceStub(channel, callOptions);
    }

    /**
     */
    public void getCacheEntry(io.github.agentd.proto.v1.GetCacheEntryRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetCacheEntryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetCacheEntryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void setCacheEntry(io.github.agentd.proto.v1.SetCacheEntryRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SetCacheEntryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSetCacheEntryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void deleteCacheEntry(io.github.agentd.proto.v1.DeleteCacheEntryRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteCacheEntryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteCacheEntryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes every key starting with a prefix.
     * </pre>
     */
    public void clearCache(io.github.agentd.proto.v1.ClearCacheRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ClearCacheResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getClearCacheMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void getCacheStats(io.github.agentd.proto.v1.GetCacheStatsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetCacheStatsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetCacheStatsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes the response-cache entries of an agent id (default-derived keys
     * only), optionally of one scope.
     * </pre>
     */
    public void invalidateResponseCache(io.github.agentd.proto.v1.InvalidateResponseCacheRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.InvalidateResponseCacheResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getInvalidateResponseCacheMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service CacheService.
   * <pre>
   * The server cache (in-memory or Redis) as an operable thing.
   * </pre>
   */
  public static final class CacheServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<CacheServiceBlockingV2Stub> {
    private CacheServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected CacheServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new CacheServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     */
    public io.github.agentd.proto.v1.GetCacheEntryResponse getCacheEntry(io.github.agentd.proto.v1.GetCacheEntryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetCacheEntryMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.SetCacheEntryResponse setCacheEntry(io.github.agentd.proto.v1.SetCacheEntryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSetCacheEntryMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.DeleteCacheEntryResponse deleteCacheEntry(io.github.agentd.proto.v1.DeleteCacheEntryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteCacheEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes every key starting with a prefix.
     * </pre>
     */
    public io.github.agentd.proto.v1.ClearCacheResponse clearCache(io.github.agentd.proto.v1.ClearCacheRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getClearCacheMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.GetCacheStatsResponse getCacheStats(io.github.agentd.proto.v1.GetCacheStatsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetCacheStatsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes the response-cache entries of an agent id (default-derived keys
     * only), optionally of one scope.
     * </pre>
     */
    public io.github.agentd.proto.v1.InvalidateResponseCacheResponse invalidateResponseCache(io.github.agentd.proto.v1.InvalidateResponseCacheRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getInvalidateResponseCacheMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service CacheService.
   * <pre>
   * The server cache (in-memory or Redis) as an operable thing.
   * </pre>
   */
  public static final class CacheServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<CacheServiceBlockingStub> {
    private CacheServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected CacheServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new CacheServiceBlockingStub(channel, callOptions);
    }

    /**
     */
    public io.github.agentd.proto.v1.GetCacheEntryResponse getCacheEntry(io.github.agentd.proto.v1.GetCacheEntryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetCacheEntryMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.SetCacheEntryResponse setCacheEntry(io.github.agentd.proto.v1.SetCacheEntryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSetCacheEntryMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.DeleteCacheEntryResponse deleteCacheEntry(io.github.agentd.proto.v1.DeleteCacheEntryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteCacheEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes every key starting with a prefix.
     * </pre>
     */
    public io.github.agentd.proto.v1.ClearCacheResponse clearCache(io.github.agentd.proto.v1.ClearCacheRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getClearCacheMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.GetCacheStatsResponse getCacheStats(io.github.agentd.proto.v1.GetCacheStatsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetCacheStatsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes the response-cache entries of an agent id (default-derived keys
     * only), optionally of one scope.
     * </pre>
     */
    public io.github.agentd.proto.v1.InvalidateResponseCacheResponse invalidateResponseCache(io.github.agentd.proto.v1.InvalidateResponseCacheRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getInvalidateResponseCacheMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service CacheService.
   * <pre>
   * The server cache (in-memory or Redis) as an operable thing.
   * </pre>
   */
  public static final class CacheServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<CacheServiceFutureStub> {
    private CacheServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected CacheServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new CacheServiceFutureStub(channel, callOptions);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.GetCacheEntryResponse> getCacheEntry(
        io.github.agentd.proto.v1.GetCacheEntryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetCacheEntryMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.SetCacheEntryResponse> setCacheEntry(
        io.github.agentd.proto.v1.SetCacheEntryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSetCacheEntryMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.DeleteCacheEntryResponse> deleteCacheEntry(
        io.github.agentd.proto.v1.DeleteCacheEntryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteCacheEntryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes every key starting with a prefix.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.ClearCacheResponse> clearCache(
        io.github.agentd.proto.v1.ClearCacheRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getClearCacheMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.GetCacheStatsResponse> getCacheStats(
        io.github.agentd.proto.v1.GetCacheStatsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetCacheStatsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes the response-cache entries of an agent id (default-derived keys
     * only), optionally of one scope.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.InvalidateResponseCacheResponse> invalidateResponseCache(
        io.github.agentd.proto.v1.InvalidateResponseCacheRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getInvalidateResponseCacheMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_GET_CACHE_ENTRY = 0;
  private static final int METHODID_SET_CACHE_ENTRY = 1;
  private static final int METHODID_DELETE_CACHE_ENTRY = 2;
  private static final int METHODID_CLEAR_CACHE = 3;
  private static final int METHODID_GET_CACHE_STATS = 4;
  private static final int METHODID_INVALIDATE_RESPONSE_CACHE = 5;

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
        case METHODID_GET_CACHE_ENTRY:
          serviceImpl.getCacheEntry((io.github.agentd.proto.v1.GetCacheEntryRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetCacheEntryResponse>) responseObserver);
          break;
        case METHODID_SET_CACHE_ENTRY:
          serviceImpl.setCacheEntry((io.github.agentd.proto.v1.SetCacheEntryRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.SetCacheEntryResponse>) responseObserver);
          break;
        case METHODID_DELETE_CACHE_ENTRY:
          serviceImpl.deleteCacheEntry((io.github.agentd.proto.v1.DeleteCacheEntryRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteCacheEntryResponse>) responseObserver);
          break;
        case METHODID_CLEAR_CACHE:
          serviceImpl.clearCache((io.github.agentd.proto.v1.ClearCacheRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ClearCacheResponse>) responseObserver);
          break;
        case METHODID_GET_CACHE_STATS:
          serviceImpl.getCacheStats((io.github.agentd.proto.v1.GetCacheStatsRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetCacheStatsResponse>) responseObserver);
          break;
        case METHODID_INVALIDATE_RESPONSE_CACHE:
          serviceImpl.invalidateResponseCache((io.github.agentd.proto.v1.InvalidateResponseCacheRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.InvalidateResponseCacheResponse>) responseObserver);
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
          getGetCacheEntryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.GetCacheEntryRequest,
              io.github.agentd.proto.v1.GetCacheEntryResponse>(
                service, METHODID_GET_CACHE_ENTRY)))
        .addMethod(
          getSetCacheEntryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.SetCacheEntryRequest,
              io.github.agentd.proto.v1.SetCacheEntryResponse>(
                service, METHODID_SET_CACHE_ENTRY)))
        .addMethod(
          getDeleteCacheEntryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.DeleteCacheEntryRequest,
              io.github.agentd.proto.v1.DeleteCacheEntryResponse>(
                service, METHODID_DELETE_CACHE_ENTRY)))
        .addMethod(
          getClearCacheMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ClearCacheRequest,
              io.github.agentd.proto.v1.ClearCacheResponse>(
                service, METHODID_CLEAR_CACHE)))
        .addMethod(
          getGetCacheStatsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.GetCacheStatsRequest,
              io.github.agentd.proto.v1.GetCacheStatsResponse>(
                service, METHODID_GET_CACHE_STATS)))
        .addMethod(
          getInvalidateResponseCacheMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.InvalidateResponseCacheRequest,
              io.github.agentd.proto.v1.InvalidateResponseCacheResponse>(
                service, METHODID_INVALIDATE_RESPONSE_CACHE)))
        .build();
  }

  private static abstract class CacheServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    CacheServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.github.agentd.proto.v1.CacheServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("CacheService");
    }
  }

  private static final class CacheServiceFileDescriptorSupplier
      extends CacheServiceBaseDescriptorSupplier {
    CacheServiceFileDescriptorSupplier() {}
  }

  private static final class CacheServiceMethodDescriptorSupplier
      extends CacheServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    CacheServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (CacheServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new CacheServiceFileDescriptorSupplier())
              .addMethod(getGetCacheEntryMethod())
              .addMethod(getSetCacheEntryMethod())
              .addMethod(getDeleteCacheEntryMethod())
              .addMethod(getClearCacheMethod())
              .addMethod(getGetCacheStatsMethod())
              .addMethod(getInvalidateResponseCacheMethod())
              .build();
        }
      }
    }
    return result;
  }
}
