package v1alpha1

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"golang.org/x/crypto/ssh"
)

// The rules here are each stated once: validation reports them at the
// field, and the later stages that once refused the same values on their
// own (rendering, connecting, fetching, create) call these functions, so
// `validate` accepts exactly what `apply` and `create` do.

// CheckRegistryName accepts what may name a registry in registries.yaml
// and a containerd certs.d directory: host[:port], "*" (every registry) or
// "_default". The name becomes a directory on the hosts, so nothing with
// a '/', "..", a space or a shell character passes.
func CheckRegistryName(name string) error {
	if name == "*" || name == "_default" || isRegistryHost(name) {
		return nil
	}
	return fmt.Errorf("%q is not a registry host: a host name or IP address, optionally with :port (docker.io, registry.example.com:5000, [fd00::1]:5000), or \"*\"", name)
}

// isRegistryHost accepts a DNS name or IPv4 address with an optional port,
// or a bracketed IPv6 address with an optional port.
func isRegistryHost(s string) bool {
	host := s
	if h, p, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p {
			return false
		}
		host = h
	} else if inner, ok := strings.CutPrefix(s, "["); ok && strings.HasSuffix(inner, "]") {
		host = strings.TrimSuffix(inner, "]")
	}
	if strings.HasPrefix(s, "[") {
		a, err := netip.ParseAddr(host)
		return err == nil && a.Is6() && a.Zone() == ""
	}
	return !strings.Contains(host, ":") && isDNSName(host)
}

// CheckRegistryEndpoint accepts a mirror endpoint: an http(s) URL (https://
// is assumed without a scheme) whose host is a registry host. Its host keys
// the endpoint's credentials and, for containerd, names a directory.
func CheckRegistryEndpoint(endpoint string) error {
	if containsControl(endpoint) || strings.ContainsAny(endpoint, " \t") {
		return errors.New("holds a space, newline or control character")
	}
	e := endpoint
	if !strings.Contains(e, "://") {
		e = "https://" + e
	}
	u, err := url.Parse(e)
	if err != nil {
		return fmt.Errorf("%q is not a URL", endpoint)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: use an http or https URL", endpoint)
	}
	if !isRegistryHost(u.Host) {
		return fmt.Errorf("%q: the host is not a host name or IP address with an optional :port", endpoint)
	}
	return nil
}

// CheckRegistryTLS refuses a client certificate without its key, or a key
// without its certificate.
func CheckRegistryTLS(t *RegistryTLS) error {
	if t != nil && (t.CertFile == "") != (t.KeyFile == "") {
		return errors.New("certFile and keyFile go together")
	}
	return nil
}

// CheckRegistryAuthFor refuses registry credentials for an engine whose
// registry configuration cannot carry them: containerd reads none from
// hosts.toml (docs/cluster.md, spec.config.registries[]).
func CheckRegistryAuthFor(engine string) error {
	if engine == EngineUpstream {
		return errors.New("containerd reads no credentials from hosts.toml; use a kubelet credential provider or imagePullSecrets")
	}
	return nil
}

// CheckRegistryRewriteFor refuses a mirror rewrite for an engine that has
// none: containerd's hosts.toml cannot express it.
func CheckRegistryRewriteFor(engine string) error {
	if engine == EngineUpstream {
		return errors.New("containerd hosts.toml has no rewrite")
	}
	return nil
}

var fileNamePart = regexp.MustCompile(`^[A-Za-z0-9_+][A-Za-z0-9._+-]{0,99}$`)

// CheckFileNamePart accepts what may go into a package's file name
// (cargoship-<name>-<arch>-<version>.tar.zst): letters, digits, '.', '_',
// '+' and '-', not starting with '.' or '-', so the name stays one file in
// the output directory.
func CheckFileNamePart(s string) error {
	if !fileNamePart.MatchString(s) {
		return fmt.Errorf("%q is not a file name part: up to 100 letters, digits, '.', '_', '+' and '-', not starting with '.' or '-'", s)
	}
	return nil
}

// managedTokenKeys are the engine settings cargoship writes itself.
var managedTokenKeys = []string{"token", "agent-token", "token-file", "agent-token-file"}

// UpstreamConfigKeys are what an upstream engine config may hold: bodies
// merged into the kubeadm documents cargoship generates.
var UpstreamConfigKeys = []string{
	"clusterConfiguration", "initConfiguration", "joinConfiguration",
	"kubeletConfiguration", "kubeProxyConfiguration",
}

// CheckEngineConfigKey checks one top-level key of an engine config (the
// distro's engine.config, a profile's engineConfig) for the engine it is
// given to; engine "" applies only the rules every engine shares. A key
// written "key+" appends to key and is checked as key.
func CheckEngineConfigKey(engine, key string, v any) error {
	name, appends := strings.CutSuffix(key, "+")
	if slices.Contains(managedTokenKeys, name) {
		return errors.New("cargoship manages the cluster token (0600 files named by token-file)")
	}
	switch engine {
	case EngineK3s, EngineRKE2:
		// Every cargoship path assumes the default layout
		// (docs/reference/engines.md 3.2).
		for _, owned := range []struct{ key, want, why string }{
			{"data-dir", "/var/lib/rancher/" + engine, "SELinux contexts, fapolicyd rules and every cargoship path assume it"},
			{"private-registry", "/etc/rancher/" + engine + "/registries.yaml", "cargoship writes registries there"},
		} {
			if name == owned.key && (appends || firstString(v) != owned.want) {
				return fmt.Errorf("%q: only %s is supported (%s)", firstString(v), owned.want, owned.why)
			}
		}
	case EngineUpstream:
		if appends || !slices.Contains(UpstreamConfigKeys, name) {
			return fmt.Errorf("use one of %s", strings.Join(UpstreamConfigKeys, ", "))
		}
		if _, ok := v.(map[string]any); !ok {
			return errors.New("must be a mapping")
		}
	}
	return nil
}

// firstString is a config value's first item, as an engine reads a key
// that may be one string or a list.
func firstString(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case []any:
		if len(t) == 0 {
			return ""
		}
		return fmt.Sprint(t[0])
	case []string:
		if len(t) == 0 {
			return ""
		}
		return t[0]
	}
	return fmt.Sprint(v)
}

var chartName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// CheckChartName accepts a packaged chart's name as engine.manifest keys
// it: the HelmChartConfig file and object are named after it (RFC 1123,
// no '_', no '/').
func CheckChartName(name string) error {
	if !chartName.MatchString(name) {
		return errors.New("the name must be a chart's name (lower-case letters, digits, '-'; at most 63)")
	}
	return nil
}

// CheckChartValues accepts a chart's values: YAML text holding a mapping,
// or a mapping. Text must parse, so a typo fails here and not in a helm
// job on the cluster.
func CheckChartValues(v any) error {
	switch t := v.(type) {
	case string:
		var probe any
		if err := yaml.Unmarshal([]byte(t), &probe); err != nil {
			// The parser's first line; the rest quotes the text back.
			first, _, _ := strings.Cut(err.Error(), "\n")
			return fmt.Errorf("the values are not YAML: %s", first)
		}
		if _, ok := probe.(map[string]any); !ok && probe != nil {
			return errors.New("the values must be a YAML mapping")
		}
		return nil
	case map[string]any, nil:
		return nil
	}
	return fmt.Errorf("the values must be YAML text or a mapping, not %s", valueKind(v))
}

// CheckChartsFor refuses chart values for an engine without a helm
// controller.
func CheckChartsFor(engine string) error {
	if engine == EngineUpstream {
		return errors.New("chart values (engine.manifest) need the k3s/rke2 helm controller; kubeadm has none")
	}
	return nil
}

// CheckEnvironmentValue accepts what /etc/environment can carry so that
// pam_env (which strips one pair of quotes and expands nothing) and a
// shell sourcing the file read the same value: no line break or control
// character, and not a single quote together with one of " $ ` \.
func CheckEnvironmentValue(v string) error {
	if containsControl(v) {
		return errors.New("the value holds a newline or control character; /etc/environment cannot carry it")
	}
	if strings.Contains(v, "'") && strings.ContainsAny(v, "\"$`\\") {
		return errors.New("a value with both a single quote and one of \" $ ` \\ cannot be written to /etc/environment unambiguously")
	}
	return nil
}

// ParseHostKey reads a hostKey pin: a SHA256: fingerprint as ssh-keygen -l
// prints it, or an authorized_keys line (ssh-ed25519 AAAA... comment). It
// returns the fingerprint, and the key when the pin is a whole key.
func ParseHostKey(pin string) (string, ssh.PublicKey, error) {
	pin = strings.TrimSpace(pin)
	if fp, ok := strings.CutPrefix(pin, "SHA256:"); ok {
		if b, err := base64.RawStdEncoding.DecodeString(fp); err != nil || len(b) != sha256.Size {
			return "", nil, fmt.Errorf("%s is not a SHA256: fingerprint (43 base64 characters, as ssh-keygen -lf prints)", strconv.Quote(pin))
		}
		return pin, nil, nil
	}
	key, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(pin))
	if err != nil || len(rest) > 0 {
		return "", nil, fmt.Errorf("%s is neither an authorized_keys line (ssh-ed25519 AAAA...) nor a SHA256: fingerprint", strconv.Quote(pin))
	}
	return ssh.FingerprintSHA256(key), key, nil
}

var sshOptionName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)

// CheckSSHOptionName accepts an ssh_config keyword as an openSSH.options
// key: it goes to ssh -o, so it may not be another flag.
func CheckSSHOptionName(k string) error {
	if !sshOptionName.MatchString(k) {
		return fmt.Errorf("%q is not an ssh option name", k)
	}
	return nil
}

// SSHOptionValue renders an openSSH.options value for ssh -o Key=Value: a
// string without a line break or NUL (ssh would read a second option), a
// number, a boolean (yes/no) or a list of those (comma-joined).
func SSHOptionValue(v any) (string, error) {
	switch v := v.(type) {
	case string:
		if strings.ContainsAny(v, "\n\r\x00") {
			return "", errors.New("holds a line break or NUL")
		}
		return v, nil
	case bool:
		if v {
			return "yes", nil
		}
		return "no", nil
	case int, int64, uint64, int32, uint32, uint:
		return fmt.Sprint(v), nil
	case float64:
		if v == float64(int64(v)) {
			return strconv.FormatInt(int64(v), 10), nil
		}
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			s, err := SSHOptionValue(x)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("want a string, number, boolean or list, got %s", valueKind(v))
}

// valueKind names a decoded YAML value's kind as a document's reader
// would.
func valueKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// CheckSource accepts a file's source as create fetches it: an http(s) URL
// with a host, a file:// URL, or a path. Messages never repeat the URL, which
// may hold credentials.
func CheckSource(src string) error {
	if strings.TrimSpace(src) == "" {
		return errors.New("is empty")
	}
	if i := strings.Index(src, "://"); i <= 0 {
		return nil
	}
	u, err := url.Parse(src)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("is not a valid URL: %w", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return errors.New("the URL has no host")
		}
	case "file":
	default:
		return fmt.Errorf("scheme %q is not supported (use http, https, file or a path)", u.Scheme)
	}
	return nil
}
