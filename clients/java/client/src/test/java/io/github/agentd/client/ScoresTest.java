package io.github.agentd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.protobuf.Timestamp;
import io.github.agentd.proto.v1.AgentServiceGrpc;
import io.github.agentd.proto.v1.GenerateRequest;
import io.github.agentd.proto.v1.GenerateResponse;
import io.github.agentd.proto.v1.ListScoresRequest;
import io.github.agentd.proto.v1.ListScoresResponse;
import io.github.agentd.proto.v1.Score;
import io.github.agentd.proto.v1.ScoringMode;
import io.grpc.stub.StreamObserver;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** ListScores with its filters and pages, and the run options of live scoring, over a real gRPC server. */
class ScoresTest {
  /** Three scores in pages of two; records every request. */
  static final class Agents extends AgentServiceGrpc.AgentServiceImplBase {
    final List<ListScoresRequest> lists = new CopyOnWriteArrayList<>();
    final List<GenerateRequest> runs = new CopyOnWriteArrayList<>();

    @Override
    public void listScores(ListScoresRequest req, StreamObserver<ListScoresResponse> out) {
      lists.add(req);
      ListScoresResponse.Builder page = ListScoresResponse.newBuilder();
      if (req.getPageToken().isEmpty()) {
        page.addScores(score("s1")).addScores(score("s2")).setNextPageToken("p2");
      } else {
        page.addScores(score("s3"));
      }
      out.onNext(page.build());
      out.onCompleted();
    }

    @Override
    public void generate(GenerateRequest req, StreamObserver<GenerateResponse> out) {
      runs.add(req);
      out.onNext(GenerateResponse.newBuilder().setText(req.getText()).build());
      out.onCompleted();
    }

    private static Score score(String id) {
      return Score.newBuilder().setId(id).setScorer("guards.guard").setValue(1).build();
    }
  }

  @Test
  void scoresFollowsEveryPageWithTheSameFilter() throws Exception {
    Agents agents = new Agents();
    try (FakeServer server = new FakeServer(agents); AgentdClient client = server.client()) {
      ListOptions options = ListOptions.builder().scoreFilter("support", "t1", "run-1", "guards.guard")
          .timeRange(Instant.ofEpochSecond(100), Instant.ofEpochSecond(200)).pageSize(2).build();
      List<String> ids = new ArrayList<>();
      for (Score s : client.scores(options)) {
        ids.add(s.getId());
      }
      assertEquals(List.of("s1", "s2", "s3"), ids);
      assertEquals(2, agents.lists.size());
      assertEquals("", agents.lists.get(0).getPageToken());
      assertEquals("p2", agents.lists.get(1).getPageToken());
      for (ListScoresRequest req : agents.lists) {
        assertEquals("support", req.getAgentId());
        assertEquals("t1", req.getThreadId());
        assertEquals("run-1", req.getRunId());
        assertEquals("guards.guard", req.getScorer());
        assertEquals(2, req.getPageSize());
        assertEquals(Timestamp.newBuilder().setSeconds(100).build(), req.getStartTime());
        assertEquals(Timestamp.newBuilder().setSeconds(200).build(), req.getEndTime());
      }
    }
  }

  @Test
  void oneAsyncPageCarriesItsNextToken() throws Exception {
    Agents agents = new Agents();
    try (FakeServer server = new FakeServer(agents); AgentdClient client = server.client()) {
      ListScoresResponse page = client.listScoresAsync(ListOptions.NONE).join();
      assertEquals(2, page.getScoresCount());
      assertEquals("p2", page.getNextPageToken());
      ListScoresRequest req = agents.lists.get(0);
      assertEquals("", req.getThreadId());
      assertFalse(req.hasStartTime());
      assertFalse(req.hasEndTime());
    }
  }

  @Test
  void aRunTurnsItsScorersOffOrForcesThem() throws Exception {
    Agents agents = new Agents();
    try (FakeServer server = new FakeServer(agents); AgentdClient client = server.client()) {
      client.generate("a", "off", RunOptions.builder().scoring(ScoringMode.SCORING_MODE_OFF).build());
      client.generate("a", "force", RunOptions.builder().scoring(ScoringMode.SCORING_MODE_FORCE)
          .persistPartialOnAbort().build());
      client.generate("a", "default");
      assertEquals(ScoringMode.SCORING_MODE_OFF, agents.runs.get(0).getOptions().getScorers().getMode());
      assertEquals(ScoringMode.SCORING_MODE_FORCE, agents.runs.get(1).getOptions().getScorers().getMode());
      assertEquals(true, agents.runs.get(1).getOptions().getPersistPartialOnAbort());
      assertFalse(agents.runs.get(2).getOptions().hasScorers());
      assertFalse(agents.runs.get(2).getOptions().hasPersistPartialOnAbort());
    }
  }
}
