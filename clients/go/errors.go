package agentd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the ErrorInfo domain of agentd's errors.
const ErrorDomain = "agentd"

// Reasons of the contract (ErrorInfo.reason); see protos/agentd/v1/README.md.
const (
	ReasonInvalidRequest            = "INVALID_REQUEST"
	ReasonMalformedRequest          = "MALFORMED_REQUEST"
	ReasonReservedContextKey        = "RESERVED_CONTEXT_KEY"
	ReasonClientToolsRequireThread  = "CLIENT_TOOLS_REQUIRE_THREAD"
	ReasonKeepRunningRequiresThread = "KEEP_RUNNING_REQUIRES_THREAD"
	ReasonMemoryIDsRequired         = "MEMORY_IDS_REQUIRED"
	ReasonUnknownProcessor          = "UNKNOWN_PROCESSOR"
	ReasonUnknownStepFunction       = "UNKNOWN_STEP_FUNCTION"
	ReasonInvalidModel              = "INVALID_MODEL"
	ReasonThreadResourceMismatch    = "THREAD_RESOURCE_MISMATCH"
	ReasonRequestContextInvalid     = "REQUEST_CONTEXT_INVALID"
	ReasonUnknownSignalType         = "UNKNOWN_SIGNAL_TYPE"
	ReasonAgentNotFound             = "AGENT_NOT_FOUND"
	ReasonThreadNotFound            = "THREAD_NOT_FOUND"
	ReasonRunNotFound               = "RUN_NOT_FOUND"
	ReasonNotificationNotFound      = "NOTIFICATION_NOT_FOUND"
	ReasonThreadAlreadyExists       = "THREAD_ALREADY_EXISTS"
	ReasonResumeOffsetExpired       = "RESUME_OFFSET_EXPIRED"
	ReasonModelError                = "MODEL_ERROR"
	ReasonCredentialsMissing        = "CREDENTIALS_MISSING"
	ReasonProviderUnavailable       = "PROVIDER_UNAVAILABLE"
	ReasonAborted                   = "ABORTED"
	ReasonCacheUnavailable          = "CACHE_UNAVAILABLE"
	ReasonStorageUnavailable        = "STORAGE_UNAVAILABLE"
	ReasonServerShutdown            = "SERVER_SHUTDOWN"
	ReasonNotImplemented            = "NOT_IMPLEMENTED"
	ReasonUnauthenticated           = "UNAUTHENTICATED"
	ReasonPermissionDenied          = "PERMISSION_DENIED"
	ReasonInternal                  = "INTERNAL"

	// Who is calling (a server with [auth]): UNAUTHENTICATED.
	ReasonTokenMissing       = "TOKEN_MISSING"
	ReasonTokenInvalid       = "TOKEN_INVALID"
	ReasonTokenExpired       = "TOKEN_EXPIRED"
	ReasonCertificateUnknown = "CERTIFICATE_UNKNOWN"
	// PERMISSION_DENIED: the caller's role is too weak (Metadata["required_role"]).
	ReasonRoleRequired = "ROLE_REQUIRED"
	// RESOURCE_EXHAUSTED: over the caller's limits; RATE_LIMITED carries RetryDelay.
	ReasonRateLimited    = "RATE_LIMITED"
	ReasonTooManyStreams = "TOO_MANY_STREAMS"
)

// Sentinels of the codes a caller handles on their own, for errors.Is:
//
//	if errors.Is(err, agentd.ErrUnauthenticated) { ... } // any reason
//	var e *agentd.Error
//	if errors.As(err, &e) && e.Reason == agentd.ReasonRateLimited {
//		time.Sleep(e.RetryDelay)
//	}
var (
	// ErrUnauthenticated: no credentials, or none the server accepts
	// (TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED, CERTIFICATE_UNKNOWN).
	ErrUnauthenticated = &Error{Code: codes.Unauthenticated}
	// ErrPermissionDenied: a known caller whose role is too weak (ROLE_REQUIRED).
	ErrPermissionDenied = &Error{Code: codes.PermissionDenied}
	// ErrResourceExhausted: over a limit (RATE_LIMITED, TOO_MANY_STREAMS, a
	// reply over the server's message size).
	ErrResourceExhausted = &Error{Code: codes.ResourceExhausted}
)

// Error is a failed agentd call: the gRPC status with the details agentd
// attaches (one ErrorInfo and, for invalid requests, a BadRequest). Every
// error this package returns for a failed RPC is an *Error; get it with
// errors.As:
//
//	var e *agentd.Error
//	if errors.As(err, &e) && e.Reason == agentd.ReasonAgentNotFound { ... }
type Error struct {
	// Code is the gRPC status code.
	Code codes.Code
	// Message is the status message.
	Message string
	// Reason is the ErrorInfo reason (UPPER_SNAKE), empty when the status
	// carried none (e.g. a transport failure).
	Reason string
	// Domain is the ErrorInfo domain ("agentd").
	Domain string
	// Metadata is the ErrorInfo metadata: the object the error is about
	// (agent_id, thread_id, ...) or, for MODEL_ERROR, status_code,
	// provider_code and retryable.
	Metadata map[string]string
	// Violations maps each invalid field path (as written in the proto, e.g.
	// "options.model_settings.temperature") to its description. Several
	// violations of one field are joined with "; ".
	Violations map[string]string
	// FieldViolations holds the same violations in the server's order.
	FieldViolations []FieldViolation
	// RetryDelay is how long to wait before trying again (the RetryInfo
	// detail: RATE_LIMITED, a backend that is down); 0 when none was sent.
	RetryDelay time.Duration

	status *status.Status
}

// FieldViolation is one google.rpc.BadRequest field violation.
type FieldViolation struct {
	Field       string
	Description string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("agentd: ")
	b.WriteString(grpcCodeName(e.Code))
	if e.Reason != "" {
		b.WriteString(" (")
		b.WriteString(e.Reason)
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	for _, v := range e.FieldViolations {
		if text := v.Field + ": " + v.Description; !strings.Contains(e.Message, text) {
			b.WriteString("; ")
			b.WriteString(text)
		}
	}
	return b.String()
}

// GRPCStatus makes status.FromError and status.Code work on an *Error.
func (e *Error) GRPCStatus() *status.Status {
	if e.status != nil {
		return e.status
	}
	return status.New(e.Code, e.Message)
}

// Unwrap lets errors.Is(err, context.Canceled) and
// errors.Is(err, context.DeadlineExceeded) see a cancelled or expired call.
func (e *Error) Unwrap() error {
	switch e.Code {
	case codes.Canceled:
		return context.Canceled
	case codes.DeadlineExceeded:
		return context.DeadlineExceeded
	}
	return nil
}

// Is reports whether target is an *Error with the same reason (and code,
// when the target sets one), so sentinel comparisons work:
//
//	errors.Is(err, &agentd.Error{Reason: agentd.ReasonThreadNotFound})
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Reason == "" && t.Code == codes.OK {
		return false
	}
	return (t.Reason == "" || t.Reason == e.Reason) && (t.Code == codes.OK || t.Code == e.Code)
}

// Retryable reports whether the same call may succeed when retried:
// UNAVAILABLE (server shutting down, storage or cache down, a retryable model
// error) or a MODEL_ERROR whose metadata says retryable.
func (e *Error) Retryable() bool {
	return e.Code == codes.Unavailable || e.Metadata["retryable"] == "true"
}

// ReasonOf returns the ErrorInfo reason of an agentd error anywhere in err's
// chain, or "" when there is none.
func ReasonOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// CodeOf returns the gRPC code of err: OK for nil, Unknown for an error that
// carries no status.
func CodeOf(err error) codes.Code {
	if err == nil {
		return codes.OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return status.Code(err)
}

// AsError converts an error returned by a gRPC call (for instance through
// the generated stubs) into an *Error, reading the google.rpc.Status details.
// It returns nil for nil, err itself when it already is an *Error, and an
// *Error with code Unknown for an error that carries no status.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	st, ok := status.FromError(err)
	if !ok {
		if errors.Is(err, context.Canceled) {
			return FromStatus(status.New(codes.Canceled, err.Error()))
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return FromStatus(status.New(codes.DeadlineExceeded, err.Error()))
		}
		return FromStatus(status.New(codes.Unknown, err.Error()))
	}
	return FromStatus(st)
}

// FromStatus builds an *Error from a gRPC status and its details. It
// returns nil for an OK status.
func FromStatus(st *status.Status) *Error {
	if st == nil || st.Code() == codes.OK {
		return nil
	}
	return fromProto(st.Proto(), st)
}

// FromRPCStatus builds an *Error from a google.rpc.Status message, such as
// the `error` answer of a Connect frame. It returns nil for nil or code 0.
func FromRPCStatus(s *rpcstatus.Status) *Error {
	if s == nil || s.GetCode() == 0 {
		return nil
	}
	return fromProto(s, status.FromProto(s))
}

func fromProto(p *rpcstatus.Status, st *status.Status) *Error {
	e := &Error{Code: codes.Code(p.GetCode()), Message: p.GetMessage(), status: st}
	for _, detail := range p.GetDetails() {
		msg, err := detail.UnmarshalNew()
		if err != nil {
			continue // a detail type this client does not know
		}
		switch d := msg.(type) {
		case *errdetails.ErrorInfo:
			if e.Reason == "" {
				e.Reason, e.Domain = d.GetReason(), d.GetDomain()
				if md := d.GetMetadata(); len(md) > 0 {
					e.Metadata = make(map[string]string, len(md))
					for k, v := range md {
						e.Metadata[k] = v
					}
				}
			}
		case *errdetails.RetryInfo:
			e.RetryDelay = d.GetRetryDelay().AsDuration()
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				e.FieldViolations = append(e.FieldViolations, FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		}
	}
	if len(e.FieldViolations) > 0 {
		e.Violations = make(map[string]string, len(e.FieldViolations))
		for _, v := range e.FieldViolations {
			if prev, ok := e.Violations[v.Field]; ok {
				e.Violations[v.Field] = prev + "; " + v.Description
			} else {
				e.Violations[v.Field] = v.Description
			}
		}
	}
	return e
}

// wrap converts an RPC error into an *Error (nil stays nil).
func wrap(err error) error {
	if err == nil {
		return nil
	}
	return AsError(err)
}

var codeNames = []string{
	codes.OK:                 "OK",
	codes.Canceled:           "CANCELLED",
	codes.Unknown:            "UNKNOWN",
	codes.InvalidArgument:    "INVALID_ARGUMENT",
	codes.DeadlineExceeded:   "DEADLINE_EXCEEDED",
	codes.NotFound:           "NOT_FOUND",
	codes.AlreadyExists:      "ALREADY_EXISTS",
	codes.PermissionDenied:   "PERMISSION_DENIED",
	codes.ResourceExhausted:  "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION",
	codes.Aborted:            "ABORTED",
	codes.OutOfRange:         "OUT_OF_RANGE",
	codes.Unimplemented:      "UNIMPLEMENTED",
	codes.Internal:           "INTERNAL",
	codes.Unavailable:        "UNAVAILABLE",
	codes.DataLoss:           "DATA_LOSS",
	codes.Unauthenticated:    "UNAUTHENTICATED",
}

// grpcCodeName is the canonical name of a code ("NOT_FOUND"), as in the
// gRPC specification and the agentd contract.
func grpcCodeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("CODE(%d)", uint32(c))
}

// CodeName is the canonical gRPC name of a code, e.g. "NOT_FOUND" (Go's
// codes.Code.String gives "NotFound").
func CodeName(c codes.Code) string { return grpcCodeName(c) }

// ParseCodeName is the inverse of CodeName; ok is false for an unknown name.
func ParseCodeName(name string) (codes.Code, bool) {
	i := slices.Index(codeNames, strings.ToUpper(name))
	if i < 0 {
		return codes.Unknown, false
	}
	return codes.Code(i), true
}
