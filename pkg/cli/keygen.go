package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/colonel-byte/cargoship/pkg/pkgfile"
)

func init() { extraCommands = append(extraCommands, newKeygenCommand) }

type keygenFlags struct {
	out, privateKey, publicKey string
	force                      bool
}

func newKeygenCommand(app *App) *cobra.Command {
	var fl keygenFlags
	cmd := &cobra.Command{
		Use:   "keygen [--out DIR | --private-key PATH --public-key PATH]",
		Short: "Make an ed25519 key pair for signing packages",
		Long: "keygen writes an ed25519 private key (PKCS#8 PEM, mode 0600) for create --signing-key and its\n" +
			"public key (PEM) for inspect --verify-key. Nothing touches the network. Keep the private key\n" +
			"on the connected side; carry only the public key across the air gap, separately from packages.",
		Example: "  cargoship keygen --out ~/.config/cargoship\n" +
			"  cargoship keygen --private-key signing.key --public-key signing.pub",
		GroupID: groupPackage,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runKeygen(cmd, app, fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.out, "out", "", "directory for "+pkgfile.PrivateKeyFile+" and "+pkgfile.PublicKeyFile+" (default .)")
	f.StringVar(&fl.privateKey, "private-key", "", "path of the private key to write")
	f.StringVar(&fl.publicKey, "public-key", "", "path of the public key to write")
	f.BoolVar(&fl.force, "force", false, "replace existing key files")
	return cmd
}

func runKeygen(cmd *cobra.Command, app *App, fl keygenFlags) error {
	priv, pub := fl.privateKey, fl.publicKey
	if (priv == "") != (pub == "") {
		return errors.New("give both --private-key and --public-key, or --out")
	}
	if priv != "" && fl.out != "" {
		return errors.New("--out and --private-key/--public-key are alternatives; give one")
	}
	if priv == "" {
		dir := fl.out
		if dir == "" {
			dir = "."
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		priv, pub = filepath.Join(dir, pkgfile.PrivateKeyFile), filepath.Join(dir, pkgfile.PublicKeyFile)
	}
	pubKey, privKey, err := pkgfile.GenerateKeyPair()
	if err != nil {
		return fmt.Errorf("generate key: %w", err)
	}
	if err := pkgfile.WriteKeyPair(priv, pub, privKey, fl.force); err != nil {
		return err
	}
	app.Log.Info("key pair written", "private", priv, "public", pub, "keyId", pkgfile.KeyID(pubKey))
	_, err = fmt.Fprintf(app.Out, "private key: %s (keep it secret)\npublic key:  %s\nkey id:      %s\n", priv, pub, pkgfile.KeyID(pubKey))
	return err
}
