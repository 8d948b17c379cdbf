package backend

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/colonel-byte/cargoship/test/fleet"
)

type testState struct {
	Name  string       `json:"name"`
	Hosts []fleet.Host `json:"hosts"`
}

func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := testState{Name: "dev", Hosts: []fleet.Host{{Name: "kc0"}}}
	if err := WriteState(dir, &want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState[testState](dir)
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("ReadState = %+v, %v; want %+v", got, err, want)
	}
	// it holds the sudo password
	if fi, err := os.Stat(filepath.Join(dir, StateFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the state file's mode: %v, %v; want 0600", fi, err)
	}
}

func TestReadStateOfNoFleet(t *testing.T) {
	if _, err := ReadState[testState](t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadState of an empty dir = %v, want os.ErrNotExist", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StateFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState[testState](dir); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadState of a broken file = %v, want an error naming it", err)
	}
}
