package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/colonel-byte/cargoship/test/engine/internal/flavor"
	"github.com/colonel-byte/cargoship/test/engine/internal/hostfs"
	"github.com/colonel-byte/cargoship/test/engine/internal/logx"
)

// configArgs turns config.yaml and its drop-ins into flags, the way the
// engines' shared parser does (docs/reference/engines.md 3.1, K-CFG): the
// file comes from --config/-c, else $K3S_CONFIG_FILE, else
// /etc/rancher/<engine>/config.yaml; <file>.d/*.yaml and *.yml follow in name
// order; the last value of a key wins and "key+" appends; each key becomes
// --key=value (one per list item). Keys the command does not define are
// skipped with the engine's own warning. A key also given on the command line
// is dropped, so real flags win and a repeated CLI flag replaces the whole
// list.
func configArgs(fl flavor.Flavor, table map[string]flag, cliArgs []string) ([]string, error) {
	file, explicit := configFile(fl, cliArgs)
	files, err := configFiles(file, explicit)
	if err != nil {
		return nil, err
	}
	var order []string
	values := map[string][]string{}
	for _, f := range files {
		if err := readConfig(f, &order, values); err != nil {
			return nil, err
		}
	}
	onCLI := cliFlagNames(table, cliArgs)
	var args []string
	for _, key := range order {
		f, ok := table[key]
		if !ok {
			logx.Warnf("Unknown flag --%s found in config.yaml, skipping", key)
			continue
		}
		if onCLI[key] {
			continue
		}
		for _, v := range values[key] {
			args = append(args, "--"+f.name+"="+v)
		}
	}
	return args, nil
}

// configFile is the config file path and whether it was asked for
// explicitly (a missing explicit file is an error, a missing default not).
func configFile(fl flavor.Flavor, args []string) (string, bool) {
	for i, a := range args {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "config" && name != "c" {
			continue
		}
		if hasValue {
			return value, true
		}
		if i+1 < len(args) {
			return args[i+1], true
		}
	}
	if e := os.Getenv(fl.Env("CONFIG_FILE")); e != "" {
		return e, true
	}
	return fl.ConfigFile(), false
}

// configFiles is the main file (if present) and its drop-ins in order.
func configFiles(file string, explicit bool) ([]string, error) {
	var files []string
	if _, err := os.Stat(hostfs.Path(file)); err == nil {
		files = append(files, file)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	entries, err := os.ReadDir(hostfs.Path(file + ".d"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var dropins []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			dropins = append(dropins, filepath.Join(file+".d", e.Name()))
		}
	}
	sort.Strings(dropins)
	if len(files) == 0 && len(dropins) == 0 && explicit {
		return nil, fmt.Errorf("open %s: no such file or directory", file)
	}
	return append(files, dropins...), nil
}

// readConfig adds one file's keys to values, keeping first-seen key order.
func readConfig(file string, order *[]string, values map[string][]string) error {
	data, err := hostfs.ReadFile(file)
	if err != nil {
		return err
	}
	var doc yaml.MapSlice
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("failed to parse %s: %w", file, err)
	}
	for _, item := range doc {
		key := fmt.Sprint(item.Key)
		appendTo := strings.HasSuffix(key, "+")
		key = strings.TrimSuffix(key, "+")
		vals, err := scalarList(item.Value)
		if err != nil {
			return fmt.Errorf("%s: key %s: %w", file, key, err)
		}
		if _, seen := values[key]; !seen {
			*order = append(*order, key)
		}
		_, isList := item.Value.([]any)
		switch {
		case !appendTo:
			values[key] = vals
		case isList || len(values[key]) == 0:
			values[key] = append(values[key], vals...)
		default:
			// "key+" with a string appends to the string, comma-separated.
			last := len(values[key]) - 1
			values[key][last] += "," + strings.Join(vals, ",")
		}
	}
	return nil
}

// scalarList is a value as flag strings: a scalar is one, a list many.
func scalarList(v any) ([]string, error) {
	switch t := v.(type) {
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			s, err := scalar(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	default:
		s, err := scalar(t)
		if err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
}

func scalar(v any) (string, error) {
	switch t := v.(type) {
	case map[string]any, yaml.MapSlice:
		return "", errors.New("a mapping is not a flag value")
	case nil:
		return "", nil
	default:
		return fmt.Sprint(t), nil
	}
}

// cliFlagNames are the flags given on the command line, by long name.
func cliFlagNames(table map[string]flag, args []string) map[string]bool {
	aliases := map[string]string{}
	for _, f := range table {
		if f.alias != "" {
			aliases[f.alias] = f.name
		}
	}
	out := map[string]bool{}
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if long, ok := aliases[name]; ok {
			name = long
		}
		out[name] = true
	}
	return out
}
