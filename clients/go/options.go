package agentd

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// CallOption configures one run: Generate and Stream, the options of a run a
// send wakes (WithWakeOptions) and a Connect session's default run options
// (WithRunOptions). Unset options fall back to the agent's defaults.
type CallOption func(*callConfig)

type callConfig struct {
	opts        *agentdv1.ExecutionOptions
	messages    []*agentdv1.Message
	keepRunning bool
	grpcOpts    []grpc.CallOption
	md          []string
	errs        []error
}

func newCallConfig(opts []CallOption) *callConfig {
	c := &callConfig{}
	for _, opt := range opts {
		if opt != nil {
			opt(c)
		}
	}
	return c
}

func (c *callConfig) exec() *agentdv1.ExecutionOptions {
	if c.opts == nil {
		c.opts = &agentdv1.ExecutionOptions{}
	}
	return c.opts
}

func (c *callConfig) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

// err is the error of options whose values did not convert, as an
// INVALID_ARGUMENT *Error raised before any call is made.
func (c *callConfig) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &Error{Code: codes.InvalidArgument, Message: errors.Join(c.errs...).Error(), Reason: ReasonInvalidRequest, Domain: ErrorDomain}
}

func (c *callConfig) ctx(ctx context.Context) context.Context {
	if len(c.md) > 0 {
		return metadata.AppendToOutgoingContext(ctx, c.md...)
	}
	return ctx
}

// executionOptions builds ExecutionOptions from CallOptions alone (for the
// options of woken runs and of Connect sessions); nil when none is set.
func executionOptions(opts []CallOption) (*agentdv1.ExecutionOptions, error) {
	c := newCallConfig(opts)
	return c.opts, c.err()
}

// WithMemory binds the run to a thread: it reads the thread's history and
// writes its messages there. The thread is created when missing. With an
// empty thread, resource is only the request's resource id (the
// response-cache scope of agents without memory).
func WithMemory(resource, thread string) CallOption {
	return func(c *callConfig) {
		m := &agentdv1.MemoryOptions{Resource: resource}
		if thread != "" {
			m.Thread = &agentdv1.MemoryOptions_ThreadId{ThreadId: thread}
		}
		c.exec().Memory = m
	}
}

// WithMemoryThread is WithMemory with a thread object: created with this
// title and metadata when missing; its metadata replaces the stored one when
// it differs (the title of an existing thread is never changed).
func WithMemoryThread(resource string, thread *agentdv1.ThreadInput) CallOption {
	return func(c *callConfig) {
		c.exec().Memory = &agentdv1.MemoryOptions{
			Resource: resource,
			Thread:   &agentdv1.MemoryOptions_ThreadObject{ThreadObject: thread},
		}
	}
}

func (c *callConfig) responseCache() *agentdv1.ResponseCacheOptions {
	o := c.exec()
	if o.ResponseCache == nil {
		o.ResponseCache = &agentdv1.ResponseCacheOptions{}
	}
	return o.ResponseCache
}

// WithCacheKey fixes the response-cache key of this call (used verbatim).
func WithCacheKey(key string) CallOption {
	return func(c *callConfig) { c.responseCache().Key = &key }
}

// WithCacheScope sets the response-cache tenant scope of this call.
func WithCacheScope(scope string) CallOption {
	return func(c *callConfig) {
		c.responseCache().ScopeOverride = &agentdv1.ResponseCacheOptions_Scope{Scope: scope}
	}
}

// WithNoCacheScope makes this call's response-cache entry explicitly
// unscoped: shared across all callers.
func WithNoCacheScope() CallOption {
	return func(c *callConfig) {
		c.responseCache().ScopeOverride = &agentdv1.ResponseCacheOptions_NoScope{NoScope: &emptypb.Empty{}}
	}
}

// WithCacheBust skips the response-cache read; the fresh result is still
// written.
func WithCacheBust() CallOption {
	return func(c *callConfig) { c.responseCache().Bust = true }
}

// WithRequestContext sets the request context visible to processors, tools
// and dynamic agent fields. Keys starting with "agentd." are reserved
// (RESERVED_CONTEXT_KEY); use WithMemory and the cache options instead.
func WithRequestContext(values map[string]any) CallOption {
	return func(c *callConfig) {
		s, err := Struct(values)
		if err != nil {
			c.fail("request context: %w", err)
			return
		}
		c.exec().RequestContext = s
	}
}

// WithScoring turns the agent's live scorers off for this run
// (agentdv1.ScoringMode_SCORING_MODE_OFF) or makes every one score it
// (agentdv1.ScoringMode_SCORING_MODE_FORCE), whatever its sampling rate.
func WithScoring(mode agentdv1.ScoringMode) CallOption {
	return func(c *callConfig) {
		c.exec().Scorers = &agentdv1.ScorerOptions{Mode: mode}
	}
}

// WithMaxSteps caps the number of model steps (the server default is 5).
func WithMaxSteps(n int) CallOption {
	return func(c *callConfig) {
		v := int32(n)
		c.exec().MaxSteps = &v
	}
}

// WithProviderOptions passes provider-namespaced options to the model call,
// e.g. {"local": {"delayMs": 30}} (keyed by provider name).
func WithProviderOptions(options map[string]any) CallOption {
	return func(c *callConfig) {
		s, err := Struct(options)
		if err != nil {
			c.fail("provider options: %w", err)
			return
		}
		c.exec().ProviderOptions = s
	}
}

// WithClientTool declares a tool the caller executes itself. Allowed only on
// thread-bound runs (WithMemory), answered over a Connect session; see
// WithTool for the session side. inputSchema is a JSON Schema (may be nil).
func WithClientTool(name, description string, inputSchema map[string]any) CallOption {
	return func(c *callConfig) {
		t := &agentdv1.ClientTool{Name: name, Description: description}
		if inputSchema != nil {
			s, err := Struct(inputSchema)
			if err != nil {
				c.fail("client tool %s schema: %w", name, err)
				return
			}
			t.InputSchema = s
		}
		c.exec().ClientTools = append(c.exec().ClientTools, t)
	}
}

// WithClientTools declares client tools given as messages.
func WithClientTools(tools ...*agentdv1.ClientTool) CallOption {
	return func(c *callConfig) { c.exec().ClientTools = append(c.exec().ClientTools, tools...) }
}

// WithActiveTools restricts the tools offered to the model to these names;
// with no name, no tool is offered.
func WithActiveTools(names ...string) CallOption {
	return func(c *callConfig) { c.exec().ActiveTools = &agentdv1.ToolNames{Names: append([]string{}, names...)} }
}

// WithTemperature sets the sampling temperature.
func WithTemperature(t float64) CallOption {
	return func(c *callConfig) { c.modelSettings().Temperature = &t }
}

// WithMaxOutputTokens caps the tokens of each model step.
func WithMaxOutputTokens(n int) CallOption {
	return func(c *callConfig) {
		v := int32(n)
		c.modelSettings().MaxOutputTokens = &v
	}
}

func (c *callConfig) modelSettings() *agentdv1.ModelSettings {
	o := c.exec()
	if o.ModelSettings == nil {
		o.ModelSettings = &agentdv1.ModelSettings{}
	}
	return o.ModelSettings
}

// WithStructuredOutput asks the model for a JSON object matching schema;
// the parsed object is GenerateResponse.Object (and the finish chunk's). An
// answer that does not match fails the run (StrategyStrict); see
// WithStructuredOutputSpec for the other strategies and a structuring model.
func WithStructuredOutput(name string, schema map[string]any) CallOption {
	return WithStructuredOutputSpec(StructuredOutput{Name: name, Schema: schema})
}

// ErrorStrategy is what a run does when its structured-output answer is
// not JSON matching the schema.
type ErrorStrategy string

const (
	// StrategyStrict (the default) ends the run with an error chunk, reason
	// STRUCTURED_OUTPUT_INVALID (Generate: ErrFailedPrecondition).
	StrategyStrict ErrorStrategy = "strict"
	// StrategyWarn ends the run normally with no object and a warning.
	StrategyWarn ErrorStrategy = "warn"
	// StrategyFallback ends the run normally with FallbackValue as its object.
	StrategyFallback ErrorStrategy = "fallback"
)

var errorStrategies = map[ErrorStrategy]agentdv1.StructuredOutputErrorStrategy{
	"":               agentdv1.StructuredOutputErrorStrategy_STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT,
	StrategyStrict:   agentdv1.StructuredOutputErrorStrategy_STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT,
	StrategyWarn:     agentdv1.StructuredOutputErrorStrategy_STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN,
	StrategyFallback: agentdv1.StructuredOutputErrorStrategy_STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK,
}

// StructuredOutput is the full form of a run's structured output (see
// WithStructuredOutputSpec). Only Schema is required.
type StructuredOutput struct {
	// Schema is the JSON Schema the answer must match.
	Schema      map[string]any
	Name        string
	Description string
	// ErrorStrategy is what a run does with an answer that does not match
	// ("": StrategyStrict).
	ErrorStrategy ErrorStrategy
	// FallbackValue is the object of a StrategyFallback run whose answer
	// does not match: required with StrategyFallback, refused with the
	// others (nil: none; structpb.NewNullValue() for a JSON null).
	FallbackValue any
	// Model is a separate structuring model ("provider/model"): the agent's
	// model answers in text, then this one turns the answer into the object.
	Model string
	// Instructions replace the structuring model's default system prompt
	// (needs Model).
	Instructions string
}

// WithStructuredOutputSpec asks for structured output described in full:
// an error strategy, a fallback value, a structuring model and its
// instructions. A missing schema or an unknown strategy is an
// INVALID_ARGUMENT error before any call is made.
func WithStructuredOutputSpec(spec StructuredOutput) CallOption {
	return func(c *callConfig) {
		strategy, ok := errorStrategies[spec.ErrorStrategy]
		if !ok {
			c.fail("structured output error strategy %q is not %q, %q or %q", spec.ErrorStrategy, StrategyStrict, StrategyWarn, StrategyFallback)
			return
		}
		if spec.Schema == nil {
			c.fail("structured output needs a schema")
			return
		}
		s, err := Struct(spec.Schema)
		if err != nil {
			c.fail("structured output schema: %w", err)
			return
		}
		out := &agentdv1.StructuredOutput{
			Schema: s, Name: spec.Name, Description: spec.Description, ErrorStrategy: strategy,
			Model: spec.Model, Instructions: spec.Instructions,
		}
		if spec.FallbackValue != nil {
			if out.FallbackValue, err = Value(spec.FallbackValue); err != nil {
				c.fail("structured output fallback value: %w", err)
				return
			}
		}
		c.exec().StructuredOutput = out
	}
}

// WithExecutionOptions edits the run's ExecutionOptions directly, for
// settings without a dedicated option (processor lists, tool choice,
// prepare_step, ...). It runs after the options before it.
func WithExecutionOptions(edit func(*agentdv1.ExecutionOptions)) CallOption {
	return func(c *callConfig) { edit(c.exec()) }
}

// WithMessages sends these messages as the run input. A non-empty input
// text given to Generate or Stream is appended as a last user message.
func WithMessages(messages ...*agentdv1.Message) CallOption {
	return func(c *callConfig) { c.messages = append(c.messages, messages...) }
}

// WithKeepRunning keeps a Stream's run going when the call is cancelled (or
// the loop over its chunks stops early). It requires a thread-bound run
// (WithMemory); read the rest with Subscribe.
func WithKeepRunning() CallOption {
	return func(c *callConfig) { c.keepRunning = true }
}

// WithCallMetadata adds a gRPC metadata pair to this call only.
func WithCallMetadata(key, value string) CallOption {
	return func(c *callConfig) { c.md = append(c.md, key, value) }
}

// WithGRPCCallOptions passes gRPC call options to this call.
func WithGRPCCallOptions(opts ...grpc.CallOption) CallOption {
	return func(c *callConfig) { c.grpcOpts = append(c.grpcOpts, opts...) }
}
