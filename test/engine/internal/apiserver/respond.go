package apiserver

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/colonel-byte/cargoship/test/engine/internal/kube"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		logx.Debugf("apiserver: write response: %v", err)
	}
}

// writeError answers with the error's Status; anything that is not an API
// error is a 500, as the apiserver reports internal errors.
func writeError(w http.ResponseWriter, err error) {
	var apiErr *kube.Error
	if !errors.As(err, &apiErr) {
		apiErr = &kube.Error{Status: kube.Status{
			TypeMeta: kube.TypeMeta{APIVersion: "v1", Kind: "Status"},
			Status:   "Failure", Message: err.Error(), Reason: "InternalError", Code: http.StatusInternalServerError,
		}}
	}
	writeJSON(w, apiErr.Status.Code, apiErr.Status)
}
