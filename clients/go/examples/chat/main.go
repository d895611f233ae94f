// Command chat is a terminal chat with an agentd agent that has memory: each
// line you type is streamed to the agent on one thread, and the answer is
// printed as it arrives.
//
//	agentd serve --config tests/conformance/agentd.toml --app tests.conformance.app --port 50051
//	go run ./examples/chat -addr 127.0.0.1:50051 -agent chat
//
// With -say, it sends that one message and exits. Ctrl-C stops the current
// answer (aborting the run); Ctrl-D ends the chat. At the end it prints the
// thread's history.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	agentd "github.com/agentd/agentd/clients/go"
	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "agentd address, host:port")
	agent := flag.String("agent", "chat", "the agent to talk to")
	resource := flag.String("resource", "demo-user", "the resource (owner) of the thread")
	thread := flag.String("thread", fmt.Sprintf("chat-%d", time.Now().UnixNano()), "the thread id")
	say := flag.String("say", "", "send this one message and exit")
	flag.Parse()

	if err := run(*addr, *agent, *resource, *thread, *say); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

func run(addr, agent, resource, thread, say string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	client, err := agentd.Dial(ctx, addr, agentd.WithInsecure(), agentd.WithTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer client.Close()

	// Errors are values: check the reason of a failed call.
	if _, err := client.GetAgent(ctx, agent); agentd.ReasonOf(err) == agentd.ReasonAgentNotFound {
		return fmt.Errorf("no agent %q on %s", agent, addr)
	} else if err != nil {
		return err
	}

	if say != "" {
		if err := turn(ctx, client, agent, resource, thread, say); err != nil {
			return err
		}
		return history(context.Background(), client, resource, thread)
	}

	fmt.Printf("talking to %s on thread %s (Ctrl-D to end)\n", agent, thread)
	lines := bufio.NewScanner(os.Stdin)
	for fmt.Print("> "); lines.Scan(); fmt.Print("> ") {
		text := strings.TrimSpace(lines.Text())
		if text == "" {
			continue
		}
		// A fresh context per turn: Ctrl-C aborts this answer, not the chat.
		turnCtx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
		err := turn(turnCtx, client, agent, resource, thread, text)
		cancel()
		if errors.Is(err, context.Canceled) {
			fmt.Println("\n(stopped)")
			continue
		}
		if err != nil {
			return err
		}
	}
	fmt.Println()
	return history(context.Background(), client, resource, thread)
}

// turn streams one answer to stdout.
func turn(ctx context.Context, client *agentd.Client, agent, resource, thread, text string) error {
	for chunk, err := range client.Stream(ctx, agent, text, agentd.WithMemory(resource, thread)) {
		if err != nil {
			var e *agentd.Error
			if errors.As(err, &e) && len(e.Violations) > 0 {
				return fmt.Errorf("%s: %v", e.Reason, e.Violations)
			}
			return err
		}
		switch p := chunk.GetPayload().(type) {
		case *agentdv1.Chunk_TextDelta:
			fmt.Print(p.TextDelta.GetText())
		case *agentdv1.Chunk_ToolCall:
			fmt.Printf("[calls %s]", p.ToolCall.GetToolName())
		case *agentdv1.Chunk_Tripwire:
			fmt.Printf("[blocked: %s]", p.Tripwire.GetTripwire().GetReason())
		case *agentdv1.Chunk_Error:
			return fmt.Errorf("the run failed: %s (%s)", p.Error.GetMessage(), p.Error.GetReason())
		case *agentdv1.Chunk_Finish:
			u := p.Finish.GetTotalUsage()
			fmt.Printf("\n(%s, %d tokens in, %d out)\n", p.Finish.GetFinishReason(), u.GetInputTokens(), u.GetOutputTokens())
		}
	}
	return nil
}

func history(ctx context.Context, client *agentd.Client, resource, thread string) error {
	fmt.Println("--- history ---")
	for m, err := range client.Messages(ctx, thread, agentd.WithResource(resource)) {
		if agentd.ReasonOf(err) == agentd.ReasonThreadNotFound {
			fmt.Println("(no thread: the agent has no memory)")
			return nil
		}
		if err != nil {
			return err
		}
		role := strings.ToLower(strings.TrimPrefix(m.GetRole().String(), "ROLE_"))
		fmt.Printf("%-9s %s\n", role+":", agentd.MessageText(m))
	}
	return nil
}
