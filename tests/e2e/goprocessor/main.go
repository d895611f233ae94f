// The Go processor of the remote-processor e2e tests: a processor service
// built with clients/go/processor, started as its own process. It prints
// "listening <addr>" once it serves. What it does, per hook, is what
// tests/e2e/test_remote_processors.py checks through agentd (the TypeScript
// twin in tests/e2e/node/src/processor.ts does the same):
//
//   - every hook appends its name to the run's state ("hooks"), and
//     process_output_result writes that list and the number of streamed
//     parts into the response message's metadata: state across hooks;
//   - process_input lowercases the input, or sleeps config.sleepMs first;
//   - process_output_stream replaces "secret" with "[redacted]", drops a
//     "drop" delta, emits one data-processor-note chunk, and exits the
//     process at part config.crashAtPart (a crash mid-run);
//   - process_output_step aborts with retry (metadata {"score": 0.1}) while
//     the step's text has "meh";
//   - process_api_error asks for one retry.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentd/agentd/clients/go/processor"
	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

func note(run *processor.Run, hook string) {
	hooks, _ := run.State["hooks"].([]any)
	run.State["hooks"] = append(hooks, hook)
}

func config(run *processor.Run, key string) float64 {
	if run.Open.GetConfig() == nil {
		return 0
	}
	return run.Open.GetConfig().GetFields()[key].GetNumberValue()
}

func lower(messages []*agentdv1.Message) []*agentdv1.Message {
	for _, m := range messages {
		for _, p := range m.GetParts() {
			if t := p.GetText(); t != nil {
				t.Text = strings.ToLower(t.Text)
			}
		}
	}
	return messages
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	p := &processor.Processor{
		Name:             "go-e2e",
		ProcessDataParts: false,
		ProcessInput: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessInputCall) ([]*agentdv1.Message, error) {
			note(run, "process_input")
			if ms := config(run, "sleepMs"); ms > 0 {
				time.Sleep(time.Duration(ms) * time.Millisecond)
			}
			return lower(call.Messages), nil
		},
		ProcessInputStep: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessInputStepCall) (*agentdv1.StepOverrides, error) {
			note(run, "process_input_step")
			return nil, nil
		},
		ProcessLLMRequest: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessLLMRequestCall) ([]*agentdv1.Message, error) {
			note(run, "process_llm_request")
			return nil, nil
		},
		ProcessLLMResponse: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessLLMResponseCall) error {
			note(run, "process_llm_response")
			return nil
		},
		ProcessOutputStream: func(ctx context.Context, run *processor.Run, part *agentdv1.Chunk) (*agentdv1.Chunk, error) {
			n, _ := run.State["parts"].(int)
			run.State["parts"] = n + 1
			if at := config(run, "crashAtPart"); at > 0 && float64(n+1) >= at {
				fmt.Fprintln(os.Stderr, "crashing on purpose")
				os.Exit(3)
			}
			d := part.GetTextDelta()
			if d == nil {
				return part, nil
			}
			if strings.TrimSpace(d.Text) == "drop" {
				return nil, nil
			}
			if _, noted := run.State["noted"]; !noted {
				run.State["noted"] = true
				if err := run.Custom("data-processor-note", map[string]any{"by": "go"}); err != nil {
					return nil, err
				}
			}
			d.Text = strings.ReplaceAll(d.Text, "secret", "[redacted]")
			return part, nil
		},
		ProcessOutputStep: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessOutputStepCall) ([]*agentdv1.Message, error) {
			note(run, "process_output_step")
			if strings.Contains(call.Text, "meh") {
				return nil, run.Abort("Be more detailed.", true, map[string]any{"score": 0.1})
			}
			return nil, nil
		},
		ProcessToolResult: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessToolResultCall) ([]*agentdv1.Message, error) {
			note(run, "process_tool_result")
			return nil, nil
		},
		ProcessOutputResult: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessOutputResultCall) ([]*agentdv1.Message, error) {
			note(run, "process_output_result")
			n, _ := run.State["parts"].(int)
			for _, m := range call.Messages {
				if m.Metadata == nil {
					m.Metadata = &structpb.Struct{Fields: map[string]*structpb.Value{}}
				}
				m.Metadata.Fields["partsSeen"] = numberValue(float64(n))
				m.Metadata.Fields["hooks"] = listValue(run.State["hooks"].([]any))
			}
			return call.Messages, nil
		},
		ProcessAPIError: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessAPIErrorCall) (bool, error) {
			note(run, "process_api_error")
			return run.RetryCount == 0, nil
		},
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("listening %s\n", lis.Addr())
	if err := processor.Serve(context.Background(), p, lis); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
