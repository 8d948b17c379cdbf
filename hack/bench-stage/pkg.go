package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/colonel-byte/cargoship/pkg/image/imagetest"
	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

// The benchmark package has the shape of the e2e suite's (test/e2e/cluster/
// testpkg.go), which lives in a test-only helper this program cannot call:
// an engine binary on the binary route, its units, common files, sysctls and
// one image. Sizes are what a real k3s package stages, less the images.
const (
	binarySize = 60 << 20 // a k3s binary is ~60-70 MiB
	layerSize  = 1 << 20
	layers     = 2
)

// sysctls are network-namespaced keys: a container host accepts them, so
// Ansible's sysctl module (which fails on a key it cannot set) and
// cargoship (which reports such a key) do the same work.
var sysctls = map[string]string{
	"net.ipv4.ip_forward":              "1",
	"net.ipv4.conf.all.forwarding":     "1",
	"net.ipv6.conf.all.forwarding":     "1",
	"net.core.somaxconn":               "4096",
	"net.ipv4.tcp_keepalive_time":      "600",
	"net.ipv4.conf.all.route_localnet": "1",
}

// unit files of the binary route; small, like k3s's own.
const serverUnit = `[Unit]
Description=Lightweight Kubernetes (cargoship bench)
After=network-online.target
[Service]
Type=notify
ExecStart=/usr/local/bin/k3s server
KillMode=process
Restart=always
[Install]
WantedBy=multi-user.target
`

const agentUnit = `[Unit]
Description=Lightweight Kubernetes agent (cargoship bench)
After=network-online.target
[Service]
Type=notify
ExecStart=/usr/local/bin/k3s agent
KillMode=process
Restart=always
[Install]
WantedBy=multi-user.target
`

// buildPackage writes the definition and its files under dir and creates
// the package with cargoship's own create.
func buildPackage(ctx context.Context, dir string) (string, error) {
	// the package's image archive has to come from a pull, as the e2e
	// suite's does: an in-process registry with one random image
	img, stop, err := imagetest.ServeRandom("bench/pause:1.0", "amd64", layerSize, layers)
	if err != nil {
		return "", err
	}
	defer stop()
	files := map[string][]byte{
		"files/k3s-server.service": []byte(serverUnit),
		"files/k3s-agent.service":  []byte(agentUnit),
		"files/k3s-killall.sh":     []byte("#!/bin/sh\n# stops every k3s process (bench stand-in)\nexec pkill -x k3s\n"),
		"files/motd":               []byte("managed by cargoship's stage benchmark\n"),
		"files/ca.pem":             pseudoPEM(),
	}
	for p, b := range files {
		if err := writeFile(filepath.Join(dir, p), b); err != nil {
			return "", err
		}
	}
	if err := writeBinary(filepath.Join(dir, "files/k3s"), binarySize); err != nil {
		return "", err
	}
	var sys strings.Builder
	for k, v := range sysctls {
		fmt.Fprintf(&sys, "        %s: %q\n", k, v)
	}
	def := fmt.Sprintf(`kind: ZarfDistro
metadata:
  name: bench
  version: 1.35.3-k3s1
  architectures: [amd64]
spec:
  type: k3s
  version: 1.35.3-k3s1
  config:
    engine:
      config:
        write-kubeconfig-mode: "0600"
        disable: [traefik, servicelb]
    os:
      sysctl:
%[1]s      files:
        - source: files/k3s
          target: /usr/local/bin/k3s
          executable: true
          selector: {package: binary}
        - source: files/k3s-killall.sh
          target: /usr/local/bin/k3s-killall.sh
          executable: true
          selector: {package: binary}
        - source: files/k3s-server.service
          target: /etc/systemd/system/k3s.service
          selector: {package: binary, profile: controller}
        - source: files/k3s-agent.service
          target: /etc/systemd/system/k3s-agent.service
          selector: {package: binary, profile: worker}
    files:
      - source: files/motd
        target: /etc/cargoship-bench/motd
        perm: "0640"
      - source: files/ca.pem
        target: /etc/cargoship-bench/ca.pem
        perm: "0644"
    imageConfig:
      compression: zstd
      images:
        - %[2]s
`, sys.String(), img)
	if err := writeFile(filepath.Join(dir, "distro.yaml"), []byte(def)); err != nil {
		return "", err
	}
	res, err := pkgfile.Create(ctx, pkgfile.CreateOptions{
		Definition: dir, OutputDir: filepath.Join(dir, "out"), InsecureRegistry: true, TmpDir: dir,
	})
	if err != nil {
		return "", fmt.Errorf("creating the package: %w", err)
	}
	return res.Path, nil
}

func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// writeBinary writes size seeded pseudo-random bytes: incompressible like
// the compressed sections of a Go binary, and the same every run.
func writeBinary(p string, size int64) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	r := rand.NewChaCha8([32]byte{'c', 'a', 'r', 'g', 'o'})
	if _, err := io.CopyN(f, r, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pseudoPEM is a CA-bundle-sized text file.
func pseudoPEM() []byte {
	var b strings.Builder
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b.WriteString("-----BEGIN CERTIFICATE-----\n")
	for range 25 {
		for range 64 {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		b.WriteByte('\n')
	}
	b.WriteString("-----END CERTIFICATE-----\n")
	return []byte(b.String())
}
