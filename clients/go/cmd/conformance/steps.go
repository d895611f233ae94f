package main

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	agentd "github.com/agentd/agentd/clients/go"
	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// step is one decoded step of a scenario.
type step map[string]any

func (s step) str(key string) (string, error) {
	v, ok := s[key].(string)
	if !ok || v == "" {
		return "", fmt.Errorf("field %q: want a non-empty string, got %v", key, s[key])
	}
	return v, nil
}

func (s step) optStr(key string) string {
	v, _ := s[key].(string)
	return v
}

func (s step) num(key string) (int, error) {
	v, ok := s[key].(float64)
	if !ok || v != float64(int(v)) {
		return 0, fmt.Errorf("field %q: want an integer, got %v", key, s[key])
	}
	return int(v), nil
}

// expectation is a step's `expect` object; every key must be checked.
type expectation struct {
	values map[string]any
	used   map[string]bool
}

func (s step) expect() (*expectation, error) {
	e := &expectation{values: map[string]any{}, used: map[string]bool{}}
	switch v := s["expect"].(type) {
	case nil:
	case map[string]any:
		e.values = v
	default:
		return nil, fmt.Errorf("expect: want an object, got %T", v)
	}
	return e, nil
}

func (e *expectation) get(key string) (any, bool) {
	v, ok := e.values[key]
	if ok {
		e.used[key] = true
	}
	return v, ok
}

func (e *expectation) has(key string) bool {
	_, ok := e.values[key]
	return ok
}

// unknown fails on expectations no check read.
func (e *expectation) unknown() error {
	var keys []string
	for k := range e.values {
		if !e.used[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	sort.Strings(keys)
	return fmt.Errorf("unknown expectation(s) %s", strings.Join(keys, ", "))
}

type cacheStats struct{ hits int64 }

type runner struct {
	client           *agentd.Client
	ctx              context.Context
	thread, resource string
	subs             map[string]*subscription
	stats            map[string]cacheStats
}

func (r *runner) close() {
	for _, s := range r.subs {
		s.cancel()
	}
}

func (r *runner) step(kind string, s step) error {
	e, err := s.expect()
	if err != nil {
		return err
	}
	switch kind {
	case "generate":
		err = r.generate(s, e)
	case "stream":
		err = r.stream(s, e)
	case "stream_slow_reader":
		err = r.streamSlowReader(s, e)
	case "list_messages":
		err = r.listMessages(s, e)
	case "subscribe":
		err = r.subscribe(s, e)
	case "send_message":
		err = r.sendMessage(s, e)
	case "read_subscription":
		err = r.readSubscription(s, e)
	case "resume":
		err = r.resume(s, e)
	case "cache_stats":
		err = r.cacheStats(s, e)
	case "connect_client_tool":
		err = r.connectClientTool(s, e)
	case "list_scores":
		err = r.listScores(s, e)
	case "update_overrides":
		err = r.updateOverrides(s, e)
	case "delete_overrides":
		err = r.deleteOverrides(s, e)
	case "get_agent":
		err = r.getAgent(s, e)
	default:
		return fmt.Errorf("unknown step kind %q", kind)
	}
	if err != nil {
		return err
	}
	return e.unknown()
}

// memoryOptions binds a run to the step's thread and resource, when given.
func memoryOptions(s step) []agentd.CallOption {
	thread, resource := s.optStr("thread"), s.optStr("resource")
	if thread == "" && resource == "" {
		return nil
	}
	return []agentd.CallOption{agentd.WithMemory(resource, thread)}
}

// checkError compares a call's error with error_code and error_reason.
// It returns handled=true when the error (or its absence) was expected.
func checkError(err error, e *expectation) (handled bool, _ error) {
	code, wantCode := e.get("error_code")
	reason, wantReason := e.get("error_reason")
	if !wantCode && !wantReason {
		return false, err
	}
	if err == nil {
		return true, fmt.Errorf("the call succeeded, want error %v %v", code, reason)
	}
	var ae *agentd.Error
	if !errors.As(err, &ae) {
		return true, fmt.Errorf("error %v is not an *agentd.Error", err)
	}
	if wantCode && agentd.CodeName(ae.Code) != code {
		return true, fmt.Errorf("error code %s, want %v (%v)", agentd.CodeName(ae.Code), code, err)
	}
	if wantReason && ae.Reason != reason {
		return true, fmt.Errorf("error reason %q, want %v (%v)", ae.Reason, reason, err)
	}
	return true, nil
}

func (r *runner) generate(s step, e *expectation) error {
	agent, err := s.str("agent")
	if err != nil {
		return err
	}
	text, err := s.str("text")
	if err != nil {
		return err
	}
	resp, err := r.client.Generate(r.ctx, agent, text, memoryOptions(s)...)
	if handled, err := checkError(err, e); handled || err != nil {
		return err
	}
	if want, ok := e.get("text"); ok && resp.GetText() != want {
		return fmt.Errorf("text %q, want %q", resp.GetText(), want)
	}
	if want, ok := e.get("finish_reason"); ok {
		if got := finishReason(resp.GetFinishReason()); got != want {
			return fmt.Errorf("finish_reason %s, want %v", got, want)
		}
	}
	if want, ok := e.get("usage_input_tokens_at_least"); ok {
		n, _ := want.(float64)
		if got := resp.GetUsage().GetInputTokens(); float64(got) < n {
			return fmt.Errorf("usage.input_tokens %d, want at least %v", got, want)
		}
	}
	return nil
}

func finishReason(f agentdv1.FinishReason) string {
	return strings.TrimPrefix(f.String(), "FINISH_REASON_")
}

func (r *runner) stream(s step, e *expectation) error {
	agent, err := s.str("agent")
	if err != nil {
		return err
	}
	text, err := s.str("text")
	if err != nil {
		return err
	}
	var chunks []*agentdv1.Chunk
	var callErr error
	for chunk, err := range r.client.Stream(r.ctx, agent, text, memoryOptions(s)...) {
		if err != nil {
			callErr = err
			break
		}
		chunks = append(chunks, chunk)
	}
	if handled, err := checkError(callErr, e); handled || err != nil {
		return err
	}
	if len(chunks) == 0 {
		return errors.New("no chunk")
	}
	kinds := make([]string, len(chunks))
	for i, c := range chunks {
		kinds[i] = agentd.Kind(c)
	}
	if want, ok := e.get("kinds"); ok {
		if w := strings_(want); !slices.Equal(kinds, w) {
			return fmt.Errorf("kinds %v, want %v", kinds, w)
		}
	}
	if want, ok := e.get("last_kinds"); ok {
		w := strings_(want)
		if len(kinds) < len(w) || !slices.Equal(kinds[len(kinds)-len(w):], w) {
			return fmt.Errorf("kinds end %v, want last %v", kinds, w)
		}
	}
	if want, ok := e.get("seq_contiguous"); ok && want == true {
		if err := seqContiguous(chunks); err != nil {
			return err
		}
	}
	if want, ok := e.get("text"); ok {
		if got := deltas(chunks); got != want {
			return fmt.Errorf("text %q, want %q", got, want)
		}
	}
	if want, ok := e.get("tripwire_processor"); ok {
		var got []string
		for _, c := range chunks {
			if t := c.GetTripwire(); t != nil {
				got = append(got, t.GetTripwire().GetProcessorId())
			}
		}
		if len(got) == 0 || got[len(got)-1] != want {
			return fmt.Errorf("tripwire processors %v, want %v", got, want)
		}
	}
	if want, ok := e.get("finish_reason"); ok {
		last := chunks[len(chunks)-1]
		if last.GetFinish() == nil {
			return fmt.Errorf("last chunk is %s, want finish", agentd.Kind(last))
		}
		if got := finishReason(last.GetFinish().GetFinishReason()); got != want {
			return fmt.Errorf("finish_reason %s, want %v", got, want)
		}
	}
	if want, ok := e.get("data_types"); ok {
		var got []string
		for _, c := range chunks {
			if d := c.GetData(); d != nil {
				got = append(got, d.GetType())
			}
		}
		if w := strings_(want); !slices.Equal(got, w) {
			return fmt.Errorf("data chunk types %v, want %v", got, w)
		}
	}
	return nil
}

func strings_(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func deltas(chunks []*agentdv1.Chunk) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(c.GetTextDelta().GetText())
	}
	return b.String()
}

func seqContiguous(chunks []*agentdv1.Chunk) error {
	for i, c := range chunks {
		if c.GetSeq() != uint64(i+1) {
			return fmt.Errorf("chunk %d (%s) has seq %d, want %d", i, agentd.Kind(c), c.GetSeq(), i+1)
		}
		if c.GetRunId() != chunks[0].GetRunId() {
			return fmt.Errorf("chunk %d has run id %q, want %q", i, c.GetRunId(), chunks[0].GetRunId())
		}
	}
	return nil
}

func (r *runner) streamSlowReader(s step, e *expectation) error {
	agent, err := s.str("agent")
	if err != nil {
		return err
	}
	words, err := s.num("words")
	if err != nil {
		return err
	}
	pause, err := s.num("pause_ms")
	if err != nil {
		return err
	}
	parts := make([]string, words)
	for i := range parts {
		parts[i] = fmt.Sprintf("w%d", i)
	}
	var chunks []*agentdv1.Chunk
	messages := 0
	for batch, err := range r.client.StreamBatches(r.ctx, agent, strings.Join(parts, " ")) {
		if err != nil {
			return err
		}
		if messages == 0 {
			time.Sleep(time.Duration(pause) * time.Millisecond) // the run goes on meanwhile
		}
		messages++
		chunks = append(chunks, batch.GetChunks()...)
	}
	if want, ok := e.get("chunks"); ok && float64(len(chunks)) != want {
		return fmt.Errorf("%d chunks, want %v", len(chunks), want)
	}
	if want, ok := e.get("fewer_messages_than_chunks"); ok && want == true && messages >= len(chunks) {
		return fmt.Errorf("%d messages for %d chunks, want fewer messages than chunks", messages, len(chunks))
	}
	if want, ok := e.get("seq_contiguous"); ok && want == true {
		if err := seqContiguous(chunks); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) listMessages(s step, e *expectation) error {
	thread, err := s.str("thread")
	if err != nil {
		return err
	}
	var opts []agentd.ListOption
	if res := s.optStr("resource"); res != "" {
		opts = append(opts, agentd.WithResource(res))
	}
	var texts []string
	for m, err := range r.client.Messages(r.ctx, thread, opts...) {
		if err != nil {
			return err
		}
		text := ""
		for _, p := range m.GetParts() {
			if t := p.GetText(); t != nil {
				text = t.GetText()
				break
			}
		}
		texts = append(texts, text)
	}
	if want, ok := e.get("texts"); ok {
		if w := strings_(want); !slices.Equal(texts, w) {
			return fmt.Errorf("texts %q, want %q", texts, w)
		}
	}
	return nil
}

// subscription is a named Subscribe call the scenario reads step by step.
type subscription struct {
	thread, resource string
	snapshot         *agentdv1.ThreadSnapshot
	items            chan item
	cancel           context.CancelFunc
	read             []*agentdv1.Chunk
}

type item struct {
	chunk *agentdv1.Chunk
	err   error
}

func (r *runner) subscribe(s step, e *expectation) error {
	name, err := s.str("name")
	if err != nil {
		return err
	}
	thread, err := s.str("thread")
	if err != nil {
		return err
	}
	resource := s.optStr("resource")
	ctx, cancel := context.WithCancel(r.ctx)
	sub := &subscription{thread: thread, resource: resource, items: make(chan item, 1<<14), cancel: cancel}
	snapshots := make(chan *agentdv1.ThreadSnapshot, 1)
	opts := []agentd.SubscribeOption{agentd.WithSnapshotHandler(func(snap *agentdv1.ThreadSnapshot) {
		select {
		case snapshots <- snap:
		default:
		}
	})}
	if resource != "" {
		opts = append(opts, agentd.WithResource(resource))
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer close(sub.items)
		for chunk, err := range r.client.Subscribe(ctx, thread, opts...) {
			select {
			case sub.items <- item{chunk, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	if old := r.subs[name]; old != nil {
		old.cancel()
	}
	r.subs[name] = sub
	// The client calls the snapshot handler on the first message, and fails
	// the subscription when that message is not a snapshot.
	select {
	case sub.snapshot = <-snapshots:
	case <-ended:
		select {
		case sub.snapshot = <-snapshots:
		default:
			for it := range sub.items {
				if it.err != nil {
					return fmt.Errorf("subscribe: %w", it.err)
				}
			}
			return errors.New("the subscription ended before its snapshot")
		}
	case <-r.ctx.Done():
		return fmt.Errorf("no snapshot: %w", r.ctx.Err())
	}
	if sub.snapshot.GetLogEpoch() == "" {
		return errors.New("the snapshot has no log epoch")
	}
	return nil
}

func (r *runner) sendMessage(s step, e *expectation) error {
	agent, err := s.str("agent")
	if err != nil {
		return err
	}
	thread, err := s.str("thread")
	if err != nil {
		return err
	}
	resource, err := s.str("resource")
	if err != nil {
		return err
	}
	text, err := s.str("text")
	if err != nil {
		return err
	}
	resp, err := r.client.SendMessage(r.ctx, agent, agentd.ThreadTarget(resource, thread), text)
	if err != nil {
		return err
	}
	if want, ok := e.get("action"); ok {
		if got := agentd.Action(resp.GetDecision()); got != want {
			return fmt.Errorf("action %q, want %v", got, want)
		}
	}
	return nil
}

func (r *runner) readSubscription(s step, e *expectation) error {
	name, err := s.str("name")
	if err != nil {
		return err
	}
	sub := r.subs[name]
	if sub == nil {
		return fmt.Errorf("no subscription %q", name)
	}
	until, err := s.str("until")
	if err != nil {
		return err
	}
	if until != "finish" {
		return fmt.Errorf("until %q: only \"finish\" is known", until)
	}
	var got []*agentdv1.Chunk
	for done := false; !done; {
		select {
		case it, ok := <-sub.items:
			if !ok {
				return fmt.Errorf("the subscription ended after %d chunks", len(got))
			}
			if it.err != nil {
				return fmt.Errorf("subscription: %w", it.err)
			}
			got = append(got, it.chunk)
			sub.read = append(sub.read, it.chunk)
			done = it.chunk.GetFinish() != nil && it.chunk.GetParentRunId() == ""
			if !done && (it.chunk.GetError() != nil || it.chunk.GetAbort() != nil) && it.chunk.GetParentRunId() == "" {
				return fmt.Errorf("the run ended with %s: %v", agentd.Kind(it.chunk), it.chunk)
			}
		case <-r.ctx.Done():
			return fmt.Errorf("no finish after %d chunks: %w", len(got), r.ctx.Err())
		}
	}
	if want, ok := e.get("echo_texts"); ok {
		var echoes []string
		for _, c := range got {
			if sig := c.GetSignal(); sig != nil {
				echoes = append(echoes, agentd.SignalText(sig.GetSignal()))
			}
		}
		if w := strings_(want); !slices.Equal(echoes, w) {
			return fmt.Errorf("echo texts %q, want %q", echoes, w)
		}
	}
	if want, ok := e.get("text"); ok {
		if t := deltas(got); t != want {
			return fmt.Errorf("text %q, want %q", t, want)
		}
	}
	return nil
}

func (r *runner) resume(s step, e *expectation) error {
	name, err := s.str("name")
	if err != nil {
		return err
	}
	sub := r.subs[name]
	if sub == nil {
		return fmt.Errorf("no subscription %q", name)
	}
	index, err := s.num("after_chunk_index")
	if err != nil {
		return err
	}
	if index < 0 || index >= len(sub.read) {
		return fmt.Errorf("after_chunk_index %d: the subscription read %d chunks", index, len(sub.read))
	}
	after := sub.read[index]
	want := sub.read[index+1:]
	if after.GetOffset() == 0 {
		return fmt.Errorf("chunk %d (%s) has no offset", index, agentd.Kind(after))
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	opts := []agentd.SubscribeOption{
		agentd.WithResume(sub.snapshot.GetLogEpoch(), after.GetOffset()),
		agentd.WithoutReconnect(),
	}
	if sub.resource != "" {
		opts = append(opts, agentd.WithResource(sub.resource))
	}
	items := make(chan item, len(want)+16)
	go func() {
		defer close(items)
		for chunk, err := range r.client.Subscribe(ctx, sub.thread, opts...) {
			select {
			case items <- item{chunk, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var got []*agentdv1.Chunk
	for len(got) < len(want) {
		select {
		case it, ok := <-items:
			if !ok {
				return fmt.Errorf("the resumed subscription ended after %d of %d chunks", len(got), len(want))
			}
			if it.err != nil {
				return fmt.Errorf("resume: %w", it.err)
			}
			got = append(got, it.chunk)
		case <-r.ctx.Done():
			return fmt.Errorf("resume replayed %d of %d chunks: %w", len(got), len(want), r.ctx.Err())
		}
	}
	// Nothing else: the replay is exactly the rest.
	select {
	case it, ok := <-items:
		if ok && it.err == nil {
			return fmt.Errorf("resume replayed an extra chunk at offset %d (%s)", it.chunk.GetOffset(), agentd.Kind(it.chunk))
		}
	case <-time.After(300 * time.Millisecond):
	}
	check, ok := e.get("replays_rest_without_gap")
	if !ok || check != true {
		return nil
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.GetOffset() != w.GetOffset() || g.GetRunId() != w.GetRunId() || g.GetSeq() != w.GetSeq() || agentd.Kind(g) != agentd.Kind(w) {
			return fmt.Errorf("replayed chunk %d is offset %d %s (run %s seq %d), want offset %d %s (run %s seq %d)",
				i, g.GetOffset(), agentd.Kind(g), g.GetRunId(), g.GetSeq(), w.GetOffset(), agentd.Kind(w), w.GetRunId(), w.GetSeq())
		}
	}
	return nil
}

func (r *runner) cacheStats(s step, e *expectation) error {
	stats, err := r.client.GetCacheStats(r.ctx)
	if err != nil {
		return err
	}
	if want, ok := e.get("hits_increased_since"); ok {
		before, known := r.stats[fmt.Sprint(want)]
		if !known {
			return fmt.Errorf("no cache stats named %v", want)
		}
		if stats.GetHits() <= before.hits {
			return fmt.Errorf("cache hits %d, want more than %d", stats.GetHits(), before.hits)
		}
	}
	if name := s.optStr("name"); name != "" {
		r.stats[name] = cacheStats{hits: stats.GetHits()}
	}
	return nil
}

// listScores polls a thread's scores until the expected scorers are there
// (scoring runs after the run has answered), for at most five seconds.
func (r *runner) listScores(s step, e *expectation) error {
	thread, err := s.str("thread")
	if err != nil {
		return err
	}
	want, check := e.get("scorers")
	deadline := time.Now().Add(5 * time.Second)
	for {
		var names []string
		for score, err := range r.client.Scores(r.ctx, &agentdv1.ListScoresRequest{ThreadId: thread}) {
			if err != nil {
				return err
			}
			names = append(names, score.GetScorer())
		}
		sort.Strings(names)
		if !check || slices.Equal(names, strings_(want)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("scorers %q, want %q", names, strings_(want))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (r *runner) connectClientTool(s step, e *expectation) error {
	var fields [5]string
	for i, key := range []string{"agent", "thread", "resource", "text", "tool"} {
		v, err := s.str(key)
		if err != nil {
			return err
		}
		fields[i] = v
	}
	agent, thread, resource, text, tool := fields[0], fields[1], fields[2], fields[3], fields[4]
	answer, ok := s["answer"]
	if !ok {
		return errors.New(`field "answer" is missing`)
	}
	answerValue, err := agentd.Value(answer)
	if err != nil {
		return err
	}
	var calls atomic.Int32
	session, err := r.client.Connect(r.ctx, agent, resource, thread,
		agentd.WithTool(tool, func(ctx context.Context, args *structpb.Value) (*structpb.Value, error) {
			calls.Add(1)
			return answerValue, nil
		}),
	)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer session.Close()
	routing, err := session.SendMessage(r.ctx, text)
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	runID := agentd.RunID(routing.GetDecision())
	if runID == "" {
		return fmt.Errorf("the send was routed %q, want a run", agentd.Action(routing.GetDecision()))
	}
	var got []*agentdv1.Chunk
	for chunk, err := range session.Chunks() {
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		if chunk.GetRunId() != runID {
			continue
		}
		got = append(got, chunk)
		if agentd.IsLast(chunk) {
			break
		}
	}
	if len(got) == 0 || !agentd.IsLast(got[len(got)-1]) {
		return fmt.Errorf("the run did not end (%d chunks): %v", len(got), r.ctx.Err())
	}
	if last := got[len(got)-1]; last.GetFinish() == nil {
		return fmt.Errorf("the run ended with %s: %v", agentd.Kind(last), last)
	}
	if n := calls.Load(); n != 1 {
		return fmt.Errorf("the tool handler ran %d times, want 1", n)
	}
	if want, ok := e.get("tool_result"); ok {
		var results []any
		for _, c := range got {
			if tr := c.GetToolResult(); tr != nil && tr.GetToolName() == tool {
				results = append(results, tr.GetResult().AsInterface())
			}
		}
		if len(results) != 1 || !reflect.DeepEqual(results[0], want) {
			return fmt.Errorf("tool results %v, want [%v]", results, want)
		}
	}
	if want, ok := e.get("text"); ok {
		if t := deltas(got); t != want {
			return fmt.Errorf("text %q, want %q", t, want)
		}
	}
	return nil
}
