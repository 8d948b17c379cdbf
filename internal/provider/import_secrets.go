package provider

import "fmt"

// registrySecrets are the auth fields that exist only to carry a secret.
var registrySecrets = []string{"pass", "token"}

// dropRegistrySecrets removes each registry's auth.pass and auth.token from
// a spec.config mapping, so an import does not copy them into the state,
// and returns the fields it removed. An auth left empty goes too.
func dropRegistrySecrets(config map[string]any) []string {
	regs, _ := config["registries"].([]any)
	var dropped []string
	for i, r := range regs {
		reg, _ := r.(map[string]any)
		auth, _ := reg["auth"].(map[string]any)
		for _, k := range registrySecrets {
			if _, ok := auth[k]; ok {
				delete(auth, k)
				dropped = append(dropped, fmt.Sprintf("spec.config.registries[%d].auth.%s", i, k))
			}
		}
		if auth != nil && len(auth) == 0 {
			delete(reg, "auth")
		}
	}
	return dropped
}
