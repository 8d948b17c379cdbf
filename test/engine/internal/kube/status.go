package kube

import (
	"fmt"
	"net/http"
	"strings"
)

// Status is meta/v1 Status, the body of every API error.
type Status struct {
	TypeMeta `json:",inline"`
	Metadata struct{}       `json:"metadata"`
	Status   string         `json:"status"`
	Message  string         `json:"message,omitempty"`
	Reason   string         `json:"reason,omitempty"`
	Details  *StatusDetails `json:"details,omitempty"`
	Code     int            `json:"code"`
}

// StatusDetails names the object an error is about.
type StatusDetails struct {
	Name  string `json:"name,omitempty"`
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// Error is an API error that knows its Status.
type Error struct{ Status Status }

func (e *Error) Error() string { return e.Status.Message }

func newError(code int, reason, msg string, d *StatusDetails) *Error {
	return &Error{Status{
		TypeMeta: TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   "Failure", Message: msg, Reason: reason, Details: d, Code: code,
	}}
}

// NotFound is the apiserver's 404 for resource "name".
func NotFound(resource, name string) *Error {
	return newError(http.StatusNotFound, "NotFound",
		fmt.Sprintf("%s %q not found", resource, name), &StatusDetails{Name: name, Kind: resource})
}

// NoSuchPath is the apiserver's 404 for a path it does not serve (no such
// group, version or resource); kubectl prints its message.
func NoSuchPath() *Error {
	return newError(http.StatusNotFound, "NotFound", "the server could not find the requested resource", &StatusDetails{})
}

// AlreadyExists is the apiserver's 409 for a create of an existing name.
func AlreadyExists(resource, name string) *Error {
	return newError(http.StatusConflict, "AlreadyExists",
		fmt.Sprintf("%s %q already exists", resource, name), &StatusDetails{Name: name, Kind: resource})
}

// Conflict is the apiserver's 409 for a stale resourceVersion.
func Conflict(resource, name string) *Error {
	return newError(http.StatusConflict, "Conflict",
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again", resource, name),
		&StatusDetails{Name: name, Kind: resource})
}

// BadRequest is a 400.
func BadRequest(msg string) *Error { return newError(http.StatusBadRequest, "BadRequest", msg, nil) }

// Invalid is a 422.
func Invalid(msg string) *Error {
	return newError(http.StatusUnprocessableEntity, "Invalid", msg, nil)
}

// Unauthorized is the 401 for a request without a client certificate.
func Unauthorized() *Error {
	return newError(http.StatusUnauthorized, "Unauthorized", "Unauthorized", nil)
}

// Forbidden is a 403.
func Forbidden(msg string) *Error { return newError(http.StatusForbidden, "Forbidden", msg, nil) }

// MethodNotAllowed is a 405.
func MethodNotAllowed() *Error {
	return newError(http.StatusMethodNotAllowed, "MethodNotAllowed", "the server does not allow this method on the requested resource", nil)
}

// UnsupportedMediaType is the 415 for a patch of a content type the
// resource does not take.
func UnsupportedMediaType(accepted []string) *Error {
	return newError(http.StatusUnsupportedMediaType, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: "+strings.Join(accepted, ", "), nil)
}

// Unavailable is a 503, what the apiserver answers while its datastore
// cannot take a request.
func Unavailable(msg string) *Error {
	return newError(http.StatusServiceUnavailable, "ServiceUnavailable", msg, nil)
}

// Success is the Status a successful eviction or delete returns.
func Success(code int) Status {
	return Status{TypeMeta: TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: "Success", Code: code}
}
