package io.github.agentd.client;

import com.google.protobuf.Timestamp;
import io.github.agentd.proto.v1.NotificationPriority;
import io.github.agentd.proto.v1.NotificationStatus;
import io.github.agentd.proto.v1.SortOrder;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Options of the list calls: paging, the resource, filters (messages, notifications, scores) and order. */
public final class ListOptions {
  public static final ListOptions NONE = builder().build();

  final int pageSize;
  final String pageToken;
  final String resource;
  final Map<String, ?> metadataFilter;
  final SortOrder order;
  final Timestamp start;
  final Timestamp end;
  final boolean systemReminders;
  final String agent;
  final List<NotificationStatus> statuses;
  final List<NotificationPriority> priorities;
  final String source;
  final String search;
  final String thread;
  final String run;
  final String scorer;

  private ListOptions(Builder b) {
    pageSize = b.pageSize;
    pageToken = b.pageToken;
    resource = b.resource;
    metadataFilter = b.metadataFilter;
    order = b.order;
    start = b.start;
    end = b.end;
    systemReminders = b.systemReminders;
    agent = b.agent;
    statuses = b.statuses;
    priorities = b.priorities;
    source = b.source;
    search = b.search;
    thread = b.thread;
    run = b.run;
    scorer = b.scorer;
  }

  public static Builder builder() {
    return new Builder();
  }

  ListOptions withPageToken(String token) {
    Builder b = new Builder();
    b.pageSize = pageSize;
    b.pageToken = token;
    b.resource = resource;
    b.metadataFilter = metadataFilter;
    b.order = order;
    b.start = start;
    b.end = end;
    b.systemReminders = systemReminders;
    b.agent = agent;
    b.statuses = statuses;
    b.priorities = priorities;
    b.source = source;
    b.search = search;
    b.thread = thread;
    b.run = run;
    b.scorer = scorer;
    return b.build();
  }

  /** Builds ListOptions. */
  public static final class Builder {
    private int pageSize;
    private String pageToken = "";
    private String resource = "";
    private Map<String, ?> metadataFilter;
    private SortOrder order = SortOrder.SORT_ORDER_UNSPECIFIED;
    private Timestamp start;
    private Timestamp end;
    private boolean systemReminders;
    private String agent = "";
    private List<NotificationStatus> statuses = List.of();
    private List<NotificationPriority> priorities = List.of();
    private String source = "";
    private String search = "";
    private String thread = "";
    private String run = "";
    private String scorer = "";

    private Builder() {}

    public Builder pageSize(int n) {
      pageSize = n;
      return this;
    }

    public Builder pageToken(String token) {
      pageToken = token;
      return this;
    }

    /** The resource that owns the thread (checked by the server). */
    public Builder resource(String resourceId) {
      resource = resourceId;
      return this;
    }

    public Builder metadataFilter(Map<String, ?> filter) {
      metadataFilter = filter;
      return this;
    }

    public Builder order(SortOrder o) {
      order = o;
      return this;
    }

    public Builder timeRange(Instant from, Instant to) {
      start = from == null ? null : Timestamp.newBuilder().setSeconds(from.getEpochSecond()).setNanos(from.getNano()).build();
      end = to == null ? null : Timestamp.newBuilder().setSeconds(to.getEpochSecond()).setNanos(to.getNano()).build();
      return this;
    }

    public Builder systemReminders() {
      systemReminders = true;
      return this;
    }

    /** The filter of listNotifications. */
    public Builder notificationFilter(String agentId, List<NotificationStatus> byStatus,
        List<NotificationPriority> byPriority, String bySource, String text) {
      agent = agentId == null ? "" : agentId;
      statuses = byStatus == null ? List.of() : List.copyOf(byStatus);
      priorities = byPriority == null ? List.of() : List.copyOf(byPriority);
      source = bySource == null ? "" : bySource;
      search = text == null ? "" : text;
      return this;
    }

    /** The filter of listScores; null or "" leaves a field unfiltered. */
    public Builder scoreFilter(String agentId, String threadId, String runId, String scorerName) {
      agent = agentId == null ? "" : agentId;
      thread = threadId == null ? "" : threadId;
      run = runId == null ? "" : runId;
      scorer = scorerName == null ? "" : scorerName;
      return this;
    }

    public ListOptions build() {
      return new ListOptions(this);
    }
  }
}
