// Command stream calls Generate and Stream on agentd's echo agent with the raw
// generated Go stubs (gen/go, wired in by go.mod's replace).
//
//	go run . [--addr 127.0.0.1:50051]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "agentd address, host:port")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, *addr); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	agents := agentdv1.NewAgentServiceClient(conn)

	reply, err := agents.Generate(ctx, &agentdv1.GenerateRequest{AgentId: "echo", Text: "hi"})
	if err != nil {
		return err
	}
	fmt.Println(reply.GetText(), reply.GetUsage().GetOutputTokens())

	stream, err := agents.Stream(ctx, &agentdv1.StreamRequest{AgentId: "echo", Text: "one two three"})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		for _, chunk := range msg.GetChunks() {
			if d := chunk.GetTextDelta(); d != nil {
				fmt.Print(d.GetText())
			}
		}
	}
	fmt.Println()
	return nil
}
