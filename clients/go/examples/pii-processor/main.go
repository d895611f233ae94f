// Command pii-processor is a PII redactor as a remote processor: e-mail
// addresses and phone numbers in the input and the streamed text become
// placeholders.
//
//	go run ./examples/pii-processor -addr 127.0.0.1:50070
//
// and in agentd.toml:
//
//	output_processors = [{ name = "remote", options = { id = "pii-go", target = "127.0.0.1:50070" } }]
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"regexp"

	"github.com/agentd/agentd/clients/go/processor"
	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

var (
	email = regexp.MustCompile(`[\w.+-]+@[\w-]+\.[\w.]+`)
	phone = regexp.MustCompile(`\+?\d[\d -]{7,}\d`)
)

func redact(s string) string {
	return phone.ReplaceAllString(email.ReplaceAllString(s, "[email]"), "[phone]")
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50070", "listen address")
	flag.Parse()
	p := &processor.Processor{
		Name: "pii-go",
		ProcessInput: func(ctx context.Context, run *processor.Run, call *agentdv1.ProcessInputCall) ([]*agentdv1.Message, error) {
			for _, m := range call.Messages {
				for _, part := range m.Parts {
					if t := part.GetText(); t != nil {
						t.Text = redact(t.Text)
					}
				}
			}
			return call.Messages, nil
		},
		ProcessOutputStream: func(ctx context.Context, run *processor.Run, part *agentdv1.Chunk) (*agentdv1.Chunk, error) {
			if d := part.GetTextDelta(); d != nil {
				d.Text = redact(d.Text)
			}
			return part, nil
		},
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("pii-go listening on %s", lis.Addr())
	log.Fatal(processor.Serve(context.Background(), p, lis))
}
