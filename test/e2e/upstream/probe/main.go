// Command probe is the upstream walk's test workload: "probe serve" answers
// HTTP with its pod's name, and "probe check" resolves names through the
// pod's DNS (CoreDNS, by the kubelet's resolv.conf) and fetches URLs, the
// way an application pod on a working cluster would. It is built static
// into an image of its own: nothing here can pull busybox.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: probe serve [-listen :8080] | probe check [-lookup NAME]... [-get URL]...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "check":
		err = check(os.Args[2:])
	default:
		err = fmt.Errorf("no command %q: serve or check", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	listen := fs.String("listen", ":8080", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	name, _ := os.Hostname()
	srv := &http.Server{Addr: *listen, ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprintln(w, name) })}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Println("serving on", *listen, "as", name)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// list is a repeatable flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// check prints one line per name and URL and fails on the first that does
// not answer within its timeout: the walk reads the pod's log and phase.
func check(args []string) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var lookups, gets list
	fs.Var(&lookups, "lookup", "a name to resolve (repeatable)")
	fs.Var(&gets, "get", "a URL to fetch (repeatable)")
	timeout := fs.Duration("timeout", 60*time.Second, "how long each may take, retried every second")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, name := range lookups {
		addrs, err := retry(*timeout, func() ([]string, error) {
			return net.DefaultResolver.LookupHost(context.Background(), name)
		})
		if err != nil {
			return fmt.Errorf("resolving %s: %w", name, err)
		}
		fmt.Printf("resolved %s %s\n", name, strings.Join(addrs, ","))
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for _, url := range gets {
		body, err := retry(*timeout, func() ([]string, error) {
			resp, err := client.Get(url)
			if err != nil {
				return nil, err
			}
			defer func() { _ = resp.Body.Close() }()
			b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
			if err != nil {
				return nil, err
			}
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("%s", resp.Status)
			}
			return []string{strings.TrimSpace(string(b))}, nil
		})
		if err != nil {
			return fmt.Errorf("fetching %s: %w", url, err)
		}
		fmt.Printf("fetched %s %s\n", url, body[0])
	}
	return nil
}

func retry(timeout time.Duration, f func() ([]string, error)) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		out, err := f()
		if err == nil || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(time.Second)
	}
}
