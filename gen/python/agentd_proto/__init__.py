"""Generated stubs for the agentd.v1 contract: `from agentd_proto.v1 import agent_service_pb2`."""
