package agentd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func invalidStatus(t *testing.T) *status.Status {
	t.Helper()
	st, err := status.New(codes.InvalidArgument, "invalid request").WithDetails(
		&errdetails.ErrorInfo{Reason: "INVALID_REQUEST", Domain: "agentd", Metadata: map[string]string{"agent_id": "echo"}},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: "options.model_settings.temperature", Description: "must be between 0 and 2"},
			{Field: "messages[1].role", Description: "is required"},
			{Field: "messages[1].role", Description: "is unknown"},
		}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAsErrorReadsErrorInfoAndBadRequest(t *testing.T) {
	e := AsError(invalidStatus(t).Err())
	if e.Code != codes.InvalidArgument || e.Message != "invalid request" {
		t.Fatalf("code/message = %v %q", e.Code, e.Message)
	}
	if e.Reason != ReasonInvalidRequest || e.Domain != ErrorDomain || e.Metadata["agent_id"] != "echo" {
		t.Fatalf("error info = %q %q %v", e.Reason, e.Domain, e.Metadata)
	}
	want := map[string]string{
		"options.model_settings.temperature": "must be between 0 and 2",
		"messages[1].role":                   "is required; is unknown",
	}
	if fmt.Sprint(e.Violations) != fmt.Sprint(want) {
		t.Fatalf("violations = %v, want %v", e.Violations, want)
	}
	if len(e.FieldViolations) != 3 || e.FieldViolations[1].Field != "messages[1].role" {
		t.Fatalf("field violations = %v", e.FieldViolations)
	}
	msg := e.Error()
	for _, part := range []string{"INVALID_ARGUMENT", "(INVALID_REQUEST)", "invalid request", "messages[1].role: is unknown"} {
		if !strings.Contains(msg, part) {
			t.Errorf("Error() = %q, missing %q", msg, part)
		}
	}
}

func TestErrorsAsThroughWrapping(t *testing.T) {
	st, _ := status.New(codes.NotFound, "agent 'x' not found").WithDetails(
		&errdetails.ErrorInfo{Reason: "AGENT_NOT_FOUND", Domain: "agentd", Metadata: map[string]string{"agent_id": "x"}},
	)
	err := fmt.Errorf("calling agentd: %w", wrap(st.Err()))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("errors.As found no *Error in %v", err)
	}
	if ReasonOf(err) != ReasonAgentNotFound || CodeOf(err) != codes.NotFound {
		t.Fatalf("ReasonOf/CodeOf = %q %v", ReasonOf(err), CodeOf(err))
	}
	if status.Code(e) != codes.NotFound {
		t.Fatalf("status.Code(*Error) = %v", status.Code(e))
	}
	if !errors.Is(err, &Error{Reason: ReasonAgentNotFound}) || errors.Is(err, &Error{Reason: ReasonThreadNotFound}) {
		t.Fatal("errors.Is by reason")
	}
	if !errors.Is(err, &Error{Code: codes.NotFound}) || errors.Is(err, &Error{}) {
		t.Fatal("errors.Is by code")
	}
	if e.Retryable() {
		t.Fatal("NOT_FOUND is not retryable")
	}
}

func TestPlainStatusAndNonStatusErrors(t *testing.T) {
	e := AsError(status.Error(codes.Unavailable, "connection refused"))
	if e.Reason != "" || e.Code != codes.Unavailable || !e.Retryable() {
		t.Fatalf("plain status: %+v", e)
	}
	if ReasonOf(errors.New("boom")) != "" || CodeOf(errors.New("boom")) != codes.Unknown || CodeOf(nil) != codes.OK {
		t.Fatal("non-agentd errors")
	}
	if AsError(nil) != nil || wrap(nil) != nil || FromStatus(status.New(codes.OK, "")) != nil {
		t.Fatal("nil and OK give nil")
	}
	cancelled := AsError(status.Error(codes.Canceled, "context canceled"))
	if !errors.Is(cancelled, context.Canceled) {
		t.Fatal("a cancelled call is context.Canceled")
	}
	if !errors.Is(AsError(context.DeadlineExceeded), context.DeadlineExceeded) {
		t.Fatal("a deadline error stays context.DeadlineExceeded")
	}
}

func TestModelErrorRetryableFromMetadata(t *testing.T) {
	st, _ := status.New(codes.FailedPrecondition, "provider said no").WithDetails(
		&errdetails.ErrorInfo{Reason: "MODEL_ERROR", Domain: "agentd", Metadata: map[string]string{"retryable": "true", "status_code": "429"}},
	)
	if e := AsError(st.Err()); !e.Retryable() || e.Metadata["status_code"] != "429" {
		t.Fatalf("model error: %+v", e)
	}
}

func TestFromRPCStatusOfConnectErrorAnswer(t *testing.T) {
	proto := invalidStatus(t).Proto()
	e := FromRPCStatus(proto)
	if e.Code != codes.InvalidArgument || e.Reason != ReasonInvalidRequest || len(e.Violations) != 2 {
		t.Fatalf("FromRPCStatus: %+v", e)
	}
	if FromRPCStatus(nil) != nil {
		t.Fatal("nil status gives nil")
	}
}

func TestCodeNames(t *testing.T) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		got, ok := ParseCodeName(CodeName(c))
		if !ok || got != c {
			t.Errorf("ParseCodeName(CodeName(%v)) = %v, %v", c, got, ok)
		}
	}
	if CodeName(codes.NotFound) != "NOT_FOUND" || CodeName(codes.Canceled) != "CANCELLED" {
		t.Fatal("canonical names")
	}
}

func TestOptionConversionErrorsAreInvalidArgument(t *testing.T) {
	cfg := newCallConfig([]CallOption{WithRequestContext(map[string]any{"bad": make(chan int)})})
	err := cfg.err()
	if CodeOf(err) != codes.InvalidArgument || ReasonOf(err) != ReasonInvalidRequest {
		t.Fatalf("err = %v", err)
	}
	v, err := Value(map[string]any{"tags": []string{"a", "b"}, "n": 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.GetStructValue().GetFields()["tags"].GetListValue().GetValues()[1].GetStringValue(); got != "b" {
		t.Fatalf("tags[1] = %q", got)
	}
}

func TestAuthFailuresMatchTheirSentinelsAndCarryTheRetryDelay(t *testing.T) {
	st, err := status.New(codes.ResourceExhausted, "over 2 requests per second").WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonRateLimited, Domain: ErrorDomain},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)},
	)
	if err != nil {
		t.Fatal(err)
	}
	e := AsError(fmt.Errorf("call: %w", st.Err()))
	if e.Reason != ReasonRateLimited || e.RetryDelay != 1500*time.Millisecond {
		t.Fatalf("reason %q, retry delay %v", e.Reason, e.RetryDelay)
	}
	if !errors.Is(e, ErrResourceExhausted) || errors.Is(e, ErrUnauthenticated) {
		t.Fatal("RESOURCE_EXHAUSTED does not match its sentinel alone")
	}
	missing, _ := status.New(codes.Unauthenticated, "no credentials").WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonTokenMissing, Domain: ErrorDomain})
	if e := AsError(missing.Err()); !errors.Is(e, ErrUnauthenticated) || e.Reason != ReasonTokenMissing || e.RetryDelay != 0 {
		t.Fatalf("unauthenticated: %v (retry %v)", e, e.RetryDelay)
	}
	if !errors.Is(AsError(status.Error(codes.PermissionDenied, "reader")), ErrPermissionDenied) {
		t.Fatal("PERMISSION_DENIED does not match ErrPermissionDenied")
	}
}
