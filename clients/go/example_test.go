package agentd_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	agentd "github.com/agentd/agentd/clients/go"
	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

func ExampleClient_Generate() {
	ctx := context.Background()
	client, err := agentd.Dial(ctx, "127.0.0.1:50051", agentd.WithInsecure(), agentd.WithTimeout(30*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	resp, err := client.Generate(ctx, "chat", "hello",
		agentd.WithMemory("user-42", "thread-1"),
		agentd.WithRequestContext(map[string]any{"locale": "en"}),
		agentd.WithMaxSteps(3),
	)
	var e *agentd.Error
	switch {
	case errors.As(err, &e) && e.Reason == agentd.ReasonAgentNotFound:
		log.Fatalf("no such agent: %s", e.Metadata["agent_id"])
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(resp.GetText())
}

func ExampleClient_Stream() {
	ctx := context.Background()
	client, err := agentd.Dial(ctx, "127.0.0.1:50051", agentd.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	for chunk, err := range client.Stream(ctx, "echo", "one two three") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(chunk.GetTextDelta().GetText())
	}
}

func ExampleClient_Subscribe() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := agentd.Dial(ctx, "127.0.0.1:50051", agentd.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	for chunk, err := range client.Subscribe(ctx, "thread-1", agentd.WithResource("user-42")) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(chunk.GetOffset(), agentd.Kind(chunk))
	}
}

func ExampleClient_SendMessage() {
	ctx := context.Background()
	client, err := agentd.Dial(ctx, "127.0.0.1:50051", agentd.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	resp, err := client.SendMessage(ctx, "chat", agentd.ThreadTarget("user-42", "thread-1"), "ping",
		agentd.WithMessageID("msg-1"),
		agentd.WithMessageAttributes(agentd.Attrs("name", "Ada")...),
		agentd.WithIfActive(agentdv1.ActiveBehavior_ACTIVE_BEHAVIOR_DELIVER),
		agentd.WithWakeOptions(agentd.WithMaxSteps(2)),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(agentd.Action(resp.GetDecision()), agentd.RunID(resp.GetDecision()))
}

func ExampleClient_Connect() {
	ctx := context.Background()
	client, err := agentd.Dial(ctx, "127.0.0.1:50051", agentd.WithInsecure())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	session, err := client.Connect(ctx, "tools", "user-42", "thread-1",
		agentd.WithTool("pick_color", func(ctx context.Context, args *structpb.Value) (*structpb.Value, error) {
			return structpb.NewStringValue("blue"), nil
		}),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	routing, err := session.SendMessage(ctx, "choose a color")
	if err != nil {
		log.Fatal(err)
	}
	runID := agentd.RunID(routing.GetDecision())
	for chunk, err := range session.Chunks() {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(chunk.GetTextDelta().GetText())
		if chunk.GetRunId() == runID && agentd.IsLast(chunk) {
			break
		}
	}
}

func ExampleWithToken() {
	ctx := context.Background()
	// A server with [auth] mode "token" and [server.tls]: the token rides on
	// every call, and the server's certificate is checked against ca.pem
	// (add a client certificate and key for mutual TLS). Without WithToken,
	// $AGENTD_TOKEN is sent; WithToken("") sends none.
	client, err := agentd.Dial(ctx, "agentd.internal:50051",
		agentd.WithTLSFiles("ca.pem", "", ""),
		agentd.WithToken(os.Getenv("MY_AGENTD_TOKEN")),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	_, err = client.Generate(ctx, "echo", "hello")
	var e *agentd.Error
	switch {
	case errors.Is(err, agentd.ErrUnauthenticated):
		log.Fatalf("who is calling? %s", agentd.ReasonOf(err)) // TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED
	case errors.As(err, &e) && e.Reason == agentd.ReasonRateLimited:
		time.Sleep(e.RetryDelay)
	}
}
