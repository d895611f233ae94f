package io.github.agentd.client;

import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.FellBehind;
import io.github.agentd.proto.v1.ResumePoint;
import io.github.agentd.proto.v1.ThreadSnapshot;
import io.grpc.Status;

/** The last offset a thread stream delivered: where a reconnection resumes. */
final class ResumeState {
  private String epoch;
  private long after;
  private boolean known;

  ResumeState(ResumePoint start) {
    if (start != null) {
      epoch = start.getLogEpoch();
      after = start.getAfterOffset();
      known = true;
    }
  }

  /** Whether a chunk was delivered already (a replay after a reconnection); else records it. */
  synchronized boolean seen(Chunk c) {
    if (c.getOffset() == 0 || !known) {
      return false;
    }
    if (Long.compareUnsigned(c.getOffset(), after) <= 0) {
      return true;
    }
    after = c.getOffset();
    return false;
  }

  synchronized void snapshot(ThreadSnapshot s) {
    if (!known) {
      epoch = s.getLogEpoch();
      after = s.getLastOffset();
      known = true;
    } else if (!s.getLogEpoch().isEmpty()) {
      epoch = s.getLogEpoch();
    }
  }

  synchronized void fellBehind(FellBehind fb) {
    if (!fb.getLogEpoch().isEmpty()) {
      epoch = fb.getLogEpoch();
    }
    after = known ? Math.max(after, fb.getLastOffset()) : fb.getLastOffset();
    known = true;
  }

  synchronized ResumePoint current() {
    return known ? ResumePoint.newBuilder().setLogEpoch(epoch == null ? "" : epoch).setAfterOffset(after).build() : null;
  }

  /** The error of a fell-behind stream that may not reconnect. */
  static AgentdException fellBehindError(FellBehind fb) {
    AgentdException.Parts parts = new AgentdException.Parts(Status.Code.OUT_OF_RANGE,
        "the subscriber fell behind; resume after offset " + fb.getLastOffset());
    parts.reason = "FELL_BEHIND";
    parts.domain = AgentdException.DOMAIN;
    parts.metadata.put("last_offset", Long.toString(fb.getLastOffset()));
    parts.metadata.put("log_epoch", fb.getLogEpoch());
    return new AgentdException(parts, null);
  }
}
