package agentd

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

var city = map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}

func TestStructuredOutputSpecCarriesEveryField(t *testing.T) {
	opts, err := executionOptions([]CallOption{WithStructuredOutputSpec(StructuredOutput{
		Schema: city, Name: "city", Description: "where", ErrorStrategy: StrategyFallback,
		FallbackValue: map[string]any{"city": "unknown"}, Model: "local/echo", Instructions: "Extract the city.",
	})})
	if err != nil {
		t.Fatal(err)
	}
	want := &agentdv1.StructuredOutput{}
	if err := protojson.Unmarshal([]byte(`{"schema": {"type": "object", "properties": {"city": {"type": "string"}}},
		"name": "city", "description": "where", "errorStrategy": "STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK",
		"fallbackValue": {"city": "unknown"}, "model": "local/echo", "instructions": "Extract the city."}`), want); err != nil {
		t.Fatal(err)
	}
	if got := opts.GetStructuredOutput(); !proto.Equal(got, want) {
		t.Fatalf("structured output = %v, want %v", got, want)
	}

	// The short form is strict, with no fallback value.
	opts, err = executionOptions([]CallOption{WithStructuredOutput("city", city)})
	if err != nil {
		t.Fatal(err)
	}
	so := opts.GetStructuredOutput()
	if so.GetName() != "city" || so.GetSchema() == nil || so.GetFallbackValue() != nil ||
		so.GetErrorStrategy() != agentdv1.StructuredOutputErrorStrategy_STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT {
		t.Fatalf("WithStructuredOutput = %v", so)
	}
	for strategy, want := range map[ErrorStrategy]agentdv1.StructuredOutputErrorStrategy{
		StrategyStrict: agentdv1.StructuredOutputErrorStrategy_STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT,
		StrategyWarn:   agentdv1.StructuredOutputErrorStrategy_STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN,
	} {
		opts, err := executionOptions([]CallOption{WithStructuredOutputSpec(StructuredOutput{Schema: city, ErrorStrategy: strategy})})
		if err != nil || opts.GetStructuredOutput().GetErrorStrategy() != want {
			t.Fatalf("%s: %v, %v", strategy, opts, err)
		}
	}
}

func TestStructuredOutputMistakesAreInvalidArgument(t *testing.T) {
	for _, tc := range []struct {
		spec StructuredOutput
		want string
	}{
		{StructuredOutput{Schema: city, ErrorStrategy: "lenient"}, `error strategy "lenient" is not "strict", "warn" or "fallback"`},
		{StructuredOutput{Name: "city"}, "needs a schema"},
		{StructuredOutput{Schema: city, ErrorStrategy: StrategyFallback, FallbackValue: make(chan int)}, "fallback value"},
	} {
		_, err := executionOptions([]CallOption{WithStructuredOutputSpec(tc.spec)})
		if CodeOf(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want INVALID_ARGUMENT with %q", tc.spec, err, tc.want)
		}
	}
}
