"""Where the template form's image comes from: a custom image; the NGC catalog, while the tenant's
settings enable it; the NGC private registry, where the scope can use a registry. An edit also
offers what the template holds, or saving would change it (docs/decisions/0030-console-forms.md)."""

from collections.abc import Mapping
from typing import Final

import msgspec

Options = tuple[tuple[str, str], ...]

CUSTOM: Final = ("", "Custom image")
NGC: Final = ("ngcCatalog", "Select from the NGC catalog")
PRIVATE: Final = ("ngcPrivateRegistry", "Select from the NGC private registry")
# How a source the form does not offer is named when a template holds it.
HELD: Final = {
    "custom": "Custom image",
    "ngcCatalog": "Select from the NGC catalog (the NGC catalog is off: kept as it is)",
    "ngcPrivateRegistry": (
        "Select from the NGC private registry (none for this scope: kept as it is)"
    ),
}
SPECS: Final = ("/spec", "/master/spec")


class Images(msgspec.Struct, frozen=True, kw_only=True):
    """The image source's options and the registry's, for each spec (`/spec`, `/master/spec`);
    a spec whose registry options are empty shows no registry to pick from."""

    sources: dict[str, Options]
    registries: dict[str, Options]


NONE: Final = Images(sources=dict.fromkeys(SPECS, (CUSTOM,)), registries=dict.fromkeys(SPECS, ()))


def image_choices(
    *, ngc: bool, registries: Options = (), held: Mapping[str, object] | None = None
) -> Images:
    """What the form offers (`registries`: those the template's scope can use, by id and name),
    with an option of its own for each source or registry `held` (an edited template's values)
    names that it would not."""
    offered = (CUSTOM, *((NGC,) if ngc else ()), *((PRIVATE,) if registries else ()))
    sources: dict[str, Options] = {}
    picks: dict[str, Options] = {}
    for at in SPECS:
        source = str((held or {}).get(f"{at}/imageSource") or "")
        registry = str((held or {}).get(f"{at}/imageRegistryId") or "")
        own = offered
        if source == "custom":  # stored as said, so the unchanged form sends it back as it was
            own = (("custom", CUSTOM[1]), *offered[1:])
        elif source and source not in dict(offered):
            own = (*offered, (source, HELD.get(source, f"{source}: kept as it is")))
        sources[at] = own
        picks[at] = registries
        if registry and registry not in dict(registries):
            picks[at] = (*registries, (registry, "Not visible to you: kept as it is"))
    return Images(sources=sources, registries=picks)
