// The pass-through processor of bench/remote.py: every streamed part passes
// unchanged, and process_input changes nothing (so a Generate pays one round
// trip for it). Prints "listening <addr>" once it serves.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"

	"github.com/agentd/agentd/clients/go/processor"
	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	p := &processor.Processor{
		Name: "bench-pass-through",
		ProcessInput: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessInputCall) ([]*agentdv1.Message, error) {
			return nil, nil
		},
		ProcessOutputStream: func(ctx context.Context, run *processor.Run, part *agentdv1.Chunk) (*agentdv1.Chunk, error) {
			return part, nil
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
