package io.github.agentd.proto.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Lists agents and runs them.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class AgentServiceGrpc {

  private AgentServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "agentd.v1.AgentService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListAgentsRequest,
      io.github.agentd.proto.v1.ListAgentsResponse> getListAgentsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListAgents",
      requestType = io.github.agentd.proto.v1.ListAgentsRequest.class,
      responseType = io.github.agentd.proto.v1.ListAgentsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListAgentsRequest,
      io.github.agentd.proto.v1.ListAgentsResponse> getListAgentsMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListAgentsRequest, io.github.agentd.proto.v1.ListAgentsResponse> getListAgentsMethod;
    if ((getListAgentsMethod = AgentServiceGrpc.getListAgentsMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getListAgentsMethod = AgentServiceGrpc.getListAgentsMethod) == null) {
          AgentServiceGrpc.getListAgentsMethod = getListAgentsMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ListAgentsRequest, io.github.agentd.proto.v1.ListAgentsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListAgents"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListAgentsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListAgentsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("ListAgents"))
              .build();
        }
      }
    }
    return getListAgentsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetAgentRequest,
      io.github.agentd.proto.v1.GetAgentResponse> getGetAgentMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetAgent",
      requestType = io.github.agentd.proto.v1.GetAgentRequest.class,
      responseType = io.github.agentd.proto.v1.GetAgentResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetAgentRequest,
      io.github.agentd.proto.v1.GetAgentResponse> getGetAgentMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetAgentRequest, io.github.agentd.proto.v1.GetAgentResponse> getGetAgentMethod;
    if ((getGetAgentMethod = AgentServiceGrpc.getGetAgentMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getGetAgentMethod = AgentServiceGrpc.getGetAgentMethod) == null) {
          AgentServiceGrpc.getGetAgentMethod = getGetAgentMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.GetAgentRequest, io.github.agentd.proto.v1.GetAgentResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetAgent"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetAgentRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetAgentResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("GetAgent"))
              .build();
        }
      }
    }
    return getGetAgentMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GenerateRequest,
      io.github.agentd.proto.v1.GenerateResponse> getGenerateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Generate",
      requestType = io.github.agentd.proto.v1.GenerateRequest.class,
      responseType = io.github.agentd.proto.v1.GenerateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GenerateRequest,
      io.github.agentd.proto.v1.GenerateResponse> getGenerateMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GenerateRequest, io.github.agentd.proto.v1.GenerateResponse> getGenerateMethod;
    if ((getGenerateMethod = AgentServiceGrpc.getGenerateMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getGenerateMethod = AgentServiceGrpc.getGenerateMethod) == null) {
          AgentServiceGrpc.getGenerateMethod = getGenerateMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.GenerateRequest, io.github.agentd.proto.v1.GenerateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Generate"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GenerateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GenerateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Generate"))
              .build();
        }
      }
    }
    return getGenerateMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.StreamRequest,
      io.github.agentd.proto.v1.StreamResponse> getStreamMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Stream",
      requestType = io.github.agentd.proto.v1.StreamRequest.class,
      responseType = io.github.agentd.proto.v1.StreamResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.StreamRequest,
      io.github.agentd.proto.v1.StreamResponse> getStreamMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.StreamRequest, io.github.agentd.proto.v1.StreamResponse> getStreamMethod;
    if ((getStreamMethod = AgentServiceGrpc.getStreamMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getStreamMethod = AgentServiceGrpc.getStreamMethod) == null) {
          AgentServiceGrpc.getStreamMethod = getStreamMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.StreamRequest, io.github.agentd.proto.v1.StreamResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Stream"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.StreamRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.StreamResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("Stream"))
              .build();
        }
      }
    }
    return getStreamMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListScoresRequest,
      io.github.agentd.proto.v1.ListScoresResponse> getListScoresMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListScores",
      requestType = io.github.agentd.proto.v1.ListScoresRequest.class,
      responseType = io.github.agentd.proto.v1.ListScoresResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListScoresRequest,
      io.github.agentd.proto.v1.ListScoresResponse> getListScoresMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListScoresRequest, io.github.agentd.proto.v1.ListScoresResponse> getListScoresMethod;
    if ((getListScoresMethod = AgentServiceGrpc.getListScoresMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getListScoresMethod = AgentServiceGrpc.getListScoresMethod) == null) {
          AgentServiceGrpc.getListScoresMethod = getListScoresMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ListScoresRequest, io.github.agentd.proto.v1.ListScoresResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListScores"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListScoresRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListScoresResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("ListScores"))
              .build();
        }
      }
    }
    return getListScoresMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetAgentOverridesRequest,
      io.github.agentd.proto.v1.GetAgentOverridesResponse> getGetAgentOverridesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetAgentOverrides",
      requestType = io.github.agentd.proto.v1.GetAgentOverridesRequest.class,
      responseType = io.github.agentd.proto.v1.GetAgentOverridesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetAgentOverridesRequest,
      io.github.agentd.proto.v1.GetAgentOverridesResponse> getGetAgentOverridesMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.GetAgentOverridesRequest, io.github.agentd.proto.v1.GetAgentOverridesResponse> getGetAgentOverridesMethod;
    if ((getGetAgentOverridesMethod = AgentServiceGrpc.getGetAgentOverridesMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getGetAgentOverridesMethod = AgentServiceGrpc.getGetAgentOverridesMethod) == null) {
          AgentServiceGrpc.getGetAgentOverridesMethod = getGetAgentOverridesMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.GetAgentOverridesRequest, io.github.agentd.proto.v1.GetAgentOverridesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetAgentOverrides"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetAgentOverridesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.GetAgentOverridesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("GetAgentOverrides"))
              .build();
        }
      }
    }
    return getGetAgentOverridesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateAgentOverridesRequest,
      io.github.agentd.proto.v1.UpdateAgentOverridesResponse> getUpdateAgentOverridesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateAgentOverrides",
      requestType = io.github.agentd.proto.v1.UpdateAgentOverridesRequest.class,
      responseType = io.github.agentd.proto.v1.UpdateAgentOverridesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateAgentOverridesRequest,
      io.github.agentd.proto.v1.UpdateAgentOverridesResponse> getUpdateAgentOverridesMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.UpdateAgentOverridesRequest, io.github.agentd.proto.v1.UpdateAgentOverridesResponse> getUpdateAgentOverridesMethod;
    if ((getUpdateAgentOverridesMethod = AgentServiceGrpc.getUpdateAgentOverridesMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getUpdateAgentOverridesMethod = AgentServiceGrpc.getUpdateAgentOverridesMethod) == null) {
          AgentServiceGrpc.getUpdateAgentOverridesMethod = getUpdateAgentOverridesMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.UpdateAgentOverridesRequest, io.github.agentd.proto.v1.UpdateAgentOverridesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateAgentOverrides"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.UpdateAgentOverridesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.UpdateAgentOverridesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("UpdateAgentOverrides"))
              .build();
        }
      }
    }
    return getUpdateAgentOverridesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteAgentOverridesRequest,
      io.github.agentd.proto.v1.DeleteAgentOverridesResponse> getDeleteAgentOverridesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteAgentOverrides",
      requestType = io.github.agentd.proto.v1.DeleteAgentOverridesRequest.class,
      responseType = io.github.agentd.proto.v1.DeleteAgentOverridesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteAgentOverridesRequest,
      io.github.agentd.proto.v1.DeleteAgentOverridesResponse> getDeleteAgentOverridesMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.DeleteAgentOverridesRequest, io.github.agentd.proto.v1.DeleteAgentOverridesResponse> getDeleteAgentOverridesMethod;
    if ((getDeleteAgentOverridesMethod = AgentServiceGrpc.getDeleteAgentOverridesMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getDeleteAgentOverridesMethod = AgentServiceGrpc.getDeleteAgentOverridesMethod) == null) {
          AgentServiceGrpc.getDeleteAgentOverridesMethod = getDeleteAgentOverridesMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.DeleteAgentOverridesRequest, io.github.agentd.proto.v1.DeleteAgentOverridesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteAgentOverrides"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.DeleteAgentOverridesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.DeleteAgentOverridesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("DeleteAgentOverrides"))
              .build();
        }
      }
    }
    return getDeleteAgentOverridesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest,
      io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse> getListAgentOverrideVersionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListAgentOverrideVersions",
      requestType = io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest.class,
      responseType = io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest,
      io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse> getListAgentOverrideVersionsMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest, io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse> getListAgentOverrideVersionsMethod;
    if ((getListAgentOverrideVersionsMethod = AgentServiceGrpc.getListAgentOverrideVersionsMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getListAgentOverrideVersionsMethod = AgentServiceGrpc.getListAgentOverrideVersionsMethod) == null) {
          AgentServiceGrpc.getListAgentOverrideVersionsMethod = getListAgentOverrideVersionsMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest, io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListAgentOverrideVersions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("ListAgentOverrideVersions"))
              .build();
        }
      }
    }
    return getListAgentOverrideVersionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.github.agentd.proto.v1.RestoreAgentOverridesRequest,
      io.github.agentd.proto.v1.RestoreAgentOverridesResponse> getRestoreAgentOverridesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RestoreAgentOverrides",
      requestType = io.github.agentd.proto.v1.RestoreAgentOverridesRequest.class,
      responseType = io.github.agentd.proto.v1.RestoreAgentOverridesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.github.agentd.proto.v1.RestoreAgentOverridesRequest,
      io.github.agentd.proto.v1.RestoreAgentOverridesResponse> getRestoreAgentOverridesMethod() {
    io.grpc.MethodDescriptor<io.github.agentd.proto.v1.RestoreAgentOverridesRequest, io.github.agentd.proto.v1.RestoreAgentOverridesResponse> getRestoreAgentOverridesMethod;
    if ((getRestoreAgentOverridesMethod = AgentServiceGrpc.getRestoreAgentOverridesMethod) == null) {
      synchronized (AgentServiceGrpc.class) {
        if ((getRestoreAgentOverridesMethod = AgentServiceGrpc.getRestoreAgentOverridesMethod) == null) {
          AgentServiceGrpc.getRestoreAgentOverridesMethod = getRestoreAgentOverridesMethod =
              io.grpc.MethodDescriptor.<io.github.agentd.proto.v1.RestoreAgentOverridesRequest, io.github.agentd.proto.v1.RestoreAgentOverridesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RestoreAgentOverrides"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.RestoreAgentOverridesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.github.agentd.proto.v1.RestoreAgentOverridesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AgentServiceMethodDescriptorSupplier("RestoreAgentOverrides"))
              .build();
        }
      }
    }
    return getRestoreAgentOverridesMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static AgentServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AgentServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AgentServiceStub>() {
        @java.lang.Override
        public AgentServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AgentServiceStub(channel, callOptions);
        }
      };
    return AgentServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static AgentServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AgentServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AgentServiceBlockingV2Stub>() {
        @java.lang.Override
        public AgentServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AgentServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return AgentServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static AgentServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AgentServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AgentServiceBlockingStub>() {
        @java.lang.Override
        public AgentServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AgentServiceBlockingStub(channel, callOptions);
        }
      };
    return AgentServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static AgentServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AgentServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AgentServiceFutureStub>() {
        @java.lang.Override
        public AgentServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AgentServiceFutureStub(channel, callOptions);
        }
      };
    return AgentServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Lists agents and runs them.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Lists the agents defined on the server, optionally filtered by metadata.
     * </pre>
     */
    default void listAgents(io.github.agentd.proto.v1.ListAgentsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListAgentsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListAgentsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Describes one agent. NOT_FOUND (AGENT_NOT_FOUND) for an unknown id.
     * </pre>
     */
    default void getAgent(io.github.agentd.proto.v1.GetAgentRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetAgentResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetAgentMethod(), responseObserver);
    }

    /**
     * <pre>
     * Runs an agent to completion and returns the full output. A tripwire is
     * not an error: the response carries it with finish reason OTHER.
     * </pre>
     */
    default void generate(io.github.agentd.proto.v1.GenerateRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GenerateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGenerateMethod(), responseObserver);
    }

    /**
     * <pre>
     * Runs an agent and streams its chunks.
     * Contract:
     * - Each response message carries one or more chunks of one run, in order.
     *   When the caller reads slower than the run produces, every chunk that
     *   is ready travels in one message; a trickle travels one chunk per
     *   message. `seq` starts at 1 and has no gap.
     * - The first chunk is `start`; the last is `finish`, `error`, `abort` or,
     *   for a blocked stream, `tripwire` followed by `finish`. The call then
     *   ends with status OK. Caller mistakes end it before the first message
     *   with INVALID_ARGUMENT, NOT_FOUND or FAILED_PRECONDITION.
     * - The run belongs to the call: cancelling the call aborts the run,
     *   unless `keep_running` was set on a thread-bound run, which then goes
     *   on and stays readable through ThreadService.Subscribe.
     * - On server shutdown a run that does not finish within the grace period
     *   ends with an `abort` chunk (reason SERVER_SHUTDOWN) and status OK.
     * </pre>
     */
    default void stream(io.github.agentd.proto.v1.StreamRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.StreamResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getStreamMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists the scores the agents' live scorers gave runs of the caller's
     * tenant, newest first, filtered by agent, thread, run, scorer or time.
     * </pre>
     */
    default void listScores(io.github.agentd.proto.v1.ListScoresRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListScoresResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListScoresMethod(), responseObserver);
    }

    /**
     * <pre>
     * Editor overrides (admin to write; see AgentOverrides). A field the
     * agent's `editor` policy locks is PERMISSION_DENIED (EDITOR_FIELD_LOCKED)
     * with a field violation naming it; a field no override can change (id,
     * name, model, output-only fields, unknown paths or tools) is
     * INVALID_ARGUMENT. The next run after a write uses the new version, on
     * every replica.
     * </pre>
     */
    default void getAgentOverrides(io.github.agentd.proto.v1.GetAgentOverridesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetAgentOverridesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetAgentOverridesMethod(), responseObserver);
    }

    /**
     */
    default void updateAgentOverrides(io.github.agentd.proto.v1.UpdateAgentOverridesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateAgentOverridesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateAgentOverridesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Removes every override (a new version with nothing overridden).
     * </pre>
     */
    default void deleteAgentOverrides(io.github.agentd.proto.v1.DeleteAgentOverridesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteAgentOverridesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteAgentOverridesMethod(), responseObserver);
    }

    /**
     */
    default void listAgentOverrideVersions(io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListAgentOverrideVersionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Makes an earlier version's fields current again, as a new version.
     * </pre>
     */
    default void restoreAgentOverrides(io.github.agentd.proto.v1.RestoreAgentOverridesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.RestoreAgentOverridesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRestoreAgentOverridesMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service AgentService.
   * <pre>
   * Lists agents and runs them.
   * </pre>
   */
  public static abstract class AgentServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return AgentServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service AgentService.
   * <pre>
   * Lists agents and runs them.
   * </pre>
   */
  public static final class AgentServiceStub
      extends io.grpc.stub.AbstractAsyncStub<AgentServiceStub> {
    private AgentServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AgentServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AgentServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Lists the agents defined on the server, optionally filtered by metadata.
     * </pre>
     */
    public void listAgents(io.github.agentd.proto.v1.ListAgentsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListAgentsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListAgentsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Describes one agent. NOT_FOUND (AGENT_NOT_FOUND) for an unknown id.
     * </pre>
     */
    public void getAgent(io.github.agentd.proto.v1.GetAgentRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetAgentResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetAgentMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Runs an agent to completion and returns the full output. A tripwire is
     * not an error: the response carries it with finish reason OTHER.
     * </pre>
     */
    public void generate(io.github.agentd.proto.v1.GenerateRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GenerateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGenerateMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Runs an agent and streams its chunks.
     * Contract:
     * - Each response message carries one or more chunks of one run, in order.
     *   When the caller reads slower than the run produces, every chunk that
     *   is ready travels in one message; a trickle travels one chunk per
     *   message. `seq` starts at 1 and has no gap.
     * - The first chunk is `start`; the last is `finish`, `error`, `abort` or,
     *   for a blocked stream, `tripwire` followed by `finish`. The call then
     *   ends with status OK. Caller mistakes end it before the first message
     *   with INVALID_ARGUMENT, NOT_FOUND or FAILED_PRECONDITION.
     * - The run belongs to the call: cancelling the call aborts the run,
     *   unless `keep_running` was set on a thread-bound run, which then goes
     *   on and stays readable through ThreadService.Subscribe.
     * - On server shutdown a run that does not finish within the grace period
     *   ends with an `abort` chunk (reason SERVER_SHUTDOWN) and status OK.
     * </pre>
     */
    public void stream(io.github.agentd.proto.v1.StreamRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.StreamResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getStreamMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists the scores the agents' live scorers gave runs of the caller's
     * tenant, newest first, filtered by agent, thread, run, scorer or time.
     * </pre>
     */
    public void listScores(io.github.agentd.proto.v1.ListScoresRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListScoresResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListScoresMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Editor overrides (admin to write; see AgentOverrides). A field the
     * agent's `editor` policy locks is PERMISSION_DENIED (EDITOR_FIELD_LOCKED)
     * with a field violation naming it; a field no override can change (id,
     * name, model, output-only fields, unknown paths or tools) is
     * INVALID_ARGUMENT. The next run after a write uses the new version, on
     * every replica.
     * </pre>
     */
    public void getAgentOverrides(io.github.agentd.proto.v1.GetAgentOverridesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetAgentOverridesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetAgentOverridesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void updateAgentOverrides(io.github.agentd.proto.v1.UpdateAgentOverridesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateAgentOverridesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateAgentOverridesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Removes every override (a new version with nothing overridden).
     * </pre>
     */
    public void deleteAgentOverrides(io.github.agentd.proto.v1.DeleteAgentOverridesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteAgentOverridesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteAgentOverridesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void listAgentOverrideVersions(io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListAgentOverrideVersionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Makes an earlier version's fields current again, as a new version.
     * </pre>
     */
    public void restoreAgentOverrides(io.github.agentd.proto.v1.RestoreAgentOverridesRequest request,
        io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.RestoreAgentOverridesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRestoreAgentOverridesMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service AgentService.
   * <pre>
   * Lists agents and runs them.
   * </pre>
   */
  public static final class AgentServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<AgentServiceBlockingV2Stub> {
    private AgentServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AgentServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AgentServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Lists the agents defined on the server, optionally filtered by metadata.
     * </pre>
     */
    public io.github.agentd.proto.v1.ListAgentsResponse listAgents(io.github.agentd.proto.v1.ListAgentsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListAgentsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Describes one agent. NOT_FOUND (AGENT_NOT_FOUND) for an unknown id.
     * </pre>
     */
    public io.github.agentd.proto.v1.GetAgentResponse getAgent(io.github.agentd.proto.v1.GetAgentRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetAgentMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs an agent to completion and returns the full output. A tripwire is
     * not an error: the response carries it with finish reason OTHER.
     * </pre>
     */
    public io.github.agentd.proto.v1.GenerateResponse generate(io.github.agentd.proto.v1.GenerateRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGenerateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs an agent and streams its chunks.
     * Contract:
     * - Each response message carries one or more chunks of one run, in order.
     *   When the caller reads slower than the run produces, every chunk that
     *   is ready travels in one message; a trickle travels one chunk per
     *   message. `seq` starts at 1 and has no gap.
     * - The first chunk is `start`; the last is `finish`, `error`, `abort` or,
     *   for a blocked stream, `tripwire` followed by `finish`. The call then
     *   ends with status OK. Caller mistakes end it before the first message
     *   with INVALID_ARGUMENT, NOT_FOUND or FAILED_PRECONDITION.
     * - The run belongs to the call: cancelling the call aborts the run,
     *   unless `keep_running` was set on a thread-bound run, which then goes
     *   on and stays readable through ThreadService.Subscribe.
     * - On server shutdown a run that does not finish within the grace period
     *   ends with an `abort` chunk (reason SERVER_SHUTDOWN) and status OK.
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, io.github.agentd.proto.v1.StreamResponse>
        stream(io.github.agentd.proto.v1.StreamRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getStreamMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the scores the agents' live scorers gave runs of the caller's
     * tenant, newest first, filtered by agent, thread, run, scorer or time.
     * </pre>
     */
    public io.github.agentd.proto.v1.ListScoresResponse listScores(io.github.agentd.proto.v1.ListScoresRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListScoresMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Editor overrides (admin to write; see AgentOverrides). A field the
     * agent's `editor` policy locks is PERMISSION_DENIED (EDITOR_FIELD_LOCKED)
     * with a field violation naming it; a field no override can change (id,
     * name, model, output-only fields, unknown paths or tools) is
     * INVALID_ARGUMENT. The next run after a write uses the new version, on
     * every replica.
     * </pre>
     */
    public io.github.agentd.proto.v1.GetAgentOverridesResponse getAgentOverrides(io.github.agentd.proto.v1.GetAgentOverridesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetAgentOverridesMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.UpdateAgentOverridesResponse updateAgentOverrides(io.github.agentd.proto.v1.UpdateAgentOverridesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpdateAgentOverridesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Removes every override (a new version with nothing overridden).
     * </pre>
     */
    public io.github.agentd.proto.v1.DeleteAgentOverridesResponse deleteAgentOverrides(io.github.agentd.proto.v1.DeleteAgentOverridesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteAgentOverridesMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse listAgentOverrideVersions(io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListAgentOverrideVersionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Makes an earlier version's fields current again, as a new version.
     * </pre>
     */
    public io.github.agentd.proto.v1.RestoreAgentOverridesResponse restoreAgentOverrides(io.github.agentd.proto.v1.RestoreAgentOverridesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRestoreAgentOverridesMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service AgentService.
   * <pre>
   * Lists agents and runs them.
   * </pre>
   */
  public static final class AgentServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<AgentServiceBlockingStub> {
    private AgentServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AgentServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AgentServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Lists the agents defined on the server, optionally filtered by metadata.
     * </pre>
     */
    public io.github.agentd.proto.v1.ListAgentsResponse listAgents(io.github.agentd.proto.v1.ListAgentsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListAgentsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Describes one agent. NOT_FOUND (AGENT_NOT_FOUND) for an unknown id.
     * </pre>
     */
    public io.github.agentd.proto.v1.GetAgentResponse getAgent(io.github.agentd.proto.v1.GetAgentRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetAgentMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs an agent to completion and returns the full output. A tripwire is
     * not an error: the response carries it with finish reason OTHER.
     * </pre>
     */
    public io.github.agentd.proto.v1.GenerateResponse generate(io.github.agentd.proto.v1.GenerateRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGenerateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs an agent and streams its chunks.
     * Contract:
     * - Each response message carries one or more chunks of one run, in order.
     *   When the caller reads slower than the run produces, every chunk that
     *   is ready travels in one message; a trickle travels one chunk per
     *   message. `seq` starts at 1 and has no gap.
     * - The first chunk is `start`; the last is `finish`, `error`, `abort` or,
     *   for a blocked stream, `tripwire` followed by `finish`. The call then
     *   ends with status OK. Caller mistakes end it before the first message
     *   with INVALID_ARGUMENT, NOT_FOUND or FAILED_PRECONDITION.
     * - The run belongs to the call: cancelling the call aborts the run,
     *   unless `keep_running` was set on a thread-bound run, which then goes
     *   on and stays readable through ThreadService.Subscribe.
     * - On server shutdown a run that does not finish within the grace period
     *   ends with an `abort` chunk (reason SERVER_SHUTDOWN) and status OK.
     * </pre>
     */
    public java.util.Iterator<io.github.agentd.proto.v1.StreamResponse> stream(
        io.github.agentd.proto.v1.StreamRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getStreamMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the scores the agents' live scorers gave runs of the caller's
     * tenant, newest first, filtered by agent, thread, run, scorer or time.
     * </pre>
     */
    public io.github.agentd.proto.v1.ListScoresResponse listScores(io.github.agentd.proto.v1.ListScoresRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListScoresMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Editor overrides (admin to write; see AgentOverrides). A field the
     * agent's `editor` policy locks is PERMISSION_DENIED (EDITOR_FIELD_LOCKED)
     * with a field violation naming it; a field no override can change (id,
     * name, model, output-only fields, unknown paths or tools) is
     * INVALID_ARGUMENT. The next run after a write uses the new version, on
     * every replica.
     * </pre>
     */
    public io.github.agentd.proto.v1.GetAgentOverridesResponse getAgentOverrides(io.github.agentd.proto.v1.GetAgentOverridesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetAgentOverridesMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.UpdateAgentOverridesResponse updateAgentOverrides(io.github.agentd.proto.v1.UpdateAgentOverridesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateAgentOverridesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Removes every override (a new version with nothing overridden).
     * </pre>
     */
    public io.github.agentd.proto.v1.DeleteAgentOverridesResponse deleteAgentOverrides(io.github.agentd.proto.v1.DeleteAgentOverridesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteAgentOverridesMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse listAgentOverrideVersions(io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListAgentOverrideVersionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Makes an earlier version's fields current again, as a new version.
     * </pre>
     */
    public io.github.agentd.proto.v1.RestoreAgentOverridesResponse restoreAgentOverrides(io.github.agentd.proto.v1.RestoreAgentOverridesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRestoreAgentOverridesMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service AgentService.
   * <pre>
   * Lists agents and runs them.
   * </pre>
   */
  public static final class AgentServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<AgentServiceFutureStub> {
    private AgentServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AgentServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AgentServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Lists the agents defined on the server, optionally filtered by metadata.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.ListAgentsResponse> listAgents(
        io.github.agentd.proto.v1.ListAgentsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListAgentsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Describes one agent. NOT_FOUND (AGENT_NOT_FOUND) for an unknown id.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.GetAgentResponse> getAgent(
        io.github.agentd.proto.v1.GetAgentRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetAgentMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Runs an agent to completion and returns the full output. A tripwire is
     * not an error: the response carries it with finish reason OTHER.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.GenerateResponse> generate(
        io.github.agentd.proto.v1.GenerateRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGenerateMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists the scores the agents' live scorers gave runs of the caller's
     * tenant, newest first, filtered by agent, thread, run, scorer or time.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.ListScoresResponse> listScores(
        io.github.agentd.proto.v1.ListScoresRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListScoresMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Editor overrides (admin to write; see AgentOverrides). A field the
     * agent's `editor` policy locks is PERMISSION_DENIED (EDITOR_FIELD_LOCKED)
     * with a field violation naming it; a field no override can change (id,
     * name, model, output-only fields, unknown paths or tools) is
     * INVALID_ARGUMENT. The next run after a write uses the new version, on
     * every replica.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.GetAgentOverridesResponse> getAgentOverrides(
        io.github.agentd.proto.v1.GetAgentOverridesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetAgentOverridesMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.UpdateAgentOverridesResponse> updateAgentOverrides(
        io.github.agentd.proto.v1.UpdateAgentOverridesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateAgentOverridesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Removes every override (a new version with nothing overridden).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.DeleteAgentOverridesResponse> deleteAgentOverrides(
        io.github.agentd.proto.v1.DeleteAgentOverridesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteAgentOverridesMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse> listAgentOverrideVersions(
        io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListAgentOverrideVersionsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Makes an earlier version's fields current again, as a new version.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<io.github.agentd.proto.v1.RestoreAgentOverridesResponse> restoreAgentOverrides(
        io.github.agentd.proto.v1.RestoreAgentOverridesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRestoreAgentOverridesMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_LIST_AGENTS = 0;
  private static final int METHODID_GET_AGENT = 1;
  private static final int METHODID_GENERATE = 2;
  private static final int METHODID_STREAM = 3;
  private static final int METHODID_LIST_SCORES = 4;
  private static final int METHODID_GET_AGENT_OVERRIDES = 5;
  private static final int METHODID_UPDATE_AGENT_OVERRIDES = 6;
  private static final int METHODID_DELETE_AGENT_OVERRIDES = 7;
  private static final int METHODID_LIST_AGENT_OVERRIDE_VERSIONS = 8;
  private static final int METHODID_RESTORE_AGENT_OVERRIDES = 9;

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
        case METHODID_LIST_AGENTS:
          serviceImpl.listAgents((io.github.agentd.proto.v1.ListAgentsRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListAgentsResponse>) responseObserver);
          break;
        case METHODID_GET_AGENT:
          serviceImpl.getAgent((io.github.agentd.proto.v1.GetAgentRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetAgentResponse>) responseObserver);
          break;
        case METHODID_GENERATE:
          serviceImpl.generate((io.github.agentd.proto.v1.GenerateRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GenerateResponse>) responseObserver);
          break;
        case METHODID_STREAM:
          serviceImpl.stream((io.github.agentd.proto.v1.StreamRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.StreamResponse>) responseObserver);
          break;
        case METHODID_LIST_SCORES:
          serviceImpl.listScores((io.github.agentd.proto.v1.ListScoresRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListScoresResponse>) responseObserver);
          break;
        case METHODID_GET_AGENT_OVERRIDES:
          serviceImpl.getAgentOverrides((io.github.agentd.proto.v1.GetAgentOverridesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.GetAgentOverridesResponse>) responseObserver);
          break;
        case METHODID_UPDATE_AGENT_OVERRIDES:
          serviceImpl.updateAgentOverrides((io.github.agentd.proto.v1.UpdateAgentOverridesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.UpdateAgentOverridesResponse>) responseObserver);
          break;
        case METHODID_DELETE_AGENT_OVERRIDES:
          serviceImpl.deleteAgentOverrides((io.github.agentd.proto.v1.DeleteAgentOverridesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.DeleteAgentOverridesResponse>) responseObserver);
          break;
        case METHODID_LIST_AGENT_OVERRIDE_VERSIONS:
          serviceImpl.listAgentOverrideVersions((io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse>) responseObserver);
          break;
        case METHODID_RESTORE_AGENT_OVERRIDES:
          serviceImpl.restoreAgentOverrides((io.github.agentd.proto.v1.RestoreAgentOverridesRequest) request,
              (io.grpc.stub.StreamObserver<io.github.agentd.proto.v1.RestoreAgentOverridesResponse>) responseObserver);
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
          getListAgentsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ListAgentsRequest,
              io.github.agentd.proto.v1.ListAgentsResponse>(
                service, METHODID_LIST_AGENTS)))
        .addMethod(
          getGetAgentMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.GetAgentRequest,
              io.github.agentd.proto.v1.GetAgentResponse>(
                service, METHODID_GET_AGENT)))
        .addMethod(
          getGenerateMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.GenerateRequest,
              io.github.agentd.proto.v1.GenerateResponse>(
                service, METHODID_GENERATE)))
        .addMethod(
          getStreamMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.StreamRequest,
              io.github.agentd.proto.v1.StreamResponse>(
                service, METHODID_STREAM)))
        .addMethod(
          getListScoresMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ListScoresRequest,
              io.github.agentd.proto.v1.ListScoresResponse>(
                service, METHODID_LIST_SCORES)))
        .addMethod(
          getGetAgentOverridesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.GetAgentOverridesRequest,
              io.github.agentd.proto.v1.GetAgentOverridesResponse>(
                service, METHODID_GET_AGENT_OVERRIDES)))
        .addMethod(
          getUpdateAgentOverridesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.UpdateAgentOverridesRequest,
              io.github.agentd.proto.v1.UpdateAgentOverridesResponse>(
                service, METHODID_UPDATE_AGENT_OVERRIDES)))
        .addMethod(
          getDeleteAgentOverridesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.DeleteAgentOverridesRequest,
              io.github.agentd.proto.v1.DeleteAgentOverridesResponse>(
                service, METHODID_DELETE_AGENT_OVERRIDES)))
        .addMethod(
          getListAgentOverrideVersionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.ListAgentOverrideVersionsRequest,
              io.github.agentd.proto.v1.ListAgentOverrideVersionsResponse>(
                service, METHODID_LIST_AGENT_OVERRIDE_VERSIONS)))
        .addMethod(
          getRestoreAgentOverridesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.github.agentd.proto.v1.RestoreAgentOverridesRequest,
              io.github.agentd.proto.v1.RestoreAgentOverridesResponse>(
                service, METHODID_RESTORE_AGENT_OVERRIDES)))
        .build();
  }

  private static abstract class AgentServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    AgentServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.github.agentd.proto.v1.AgentServiceProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("AgentService");
    }
  }

  private static final class AgentServiceFileDescriptorSupplier
      extends AgentServiceBaseDescriptorSupplier {
    AgentServiceFileDescriptorSupplier() {}
  }

  private static final class AgentServiceMethodDescriptorSupplier
      extends AgentServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    AgentServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (AgentServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new AgentServiceFileDescriptorSupplier())
              .addMethod(getListAgentsMethod())
              .addMethod(getGetAgentMethod())
              .addMethod(getGenerateMethod())
              .addMethod(getStreamMethod())
              .addMethod(getListScoresMethod())
              .addMethod(getGetAgentOverridesMethod())
              .addMethod(getUpdateAgentOverridesMethod())
              .addMethod(getDeleteAgentOverridesMethod())
              .addMethod(getListAgentOverrideVersionsMethod())
              .addMethod(getRestoreAgentOverridesMethod())
              .build();
        }
      }
    }
    return result;
  }
}
