"""The image's sources the template form offers: the NGC catalog only while its switch is on,
the NGC private registry only where the template's scope can use a registry."""

from infra.console.form_fields import environment_fields
from infra.console.image_choices import image_choices

REGISTRIES = (("6b1f0c2d-3e4a-4b5c-9d6e-7f8091a2b3c4", "team-ngc"),)


def test_the_private_registry_is_offered_only_where_the_scope_has_registries() -> None:
    without = image_choices(ngc=False)
    assert dict(without.sources["/spec"]) == {"": "Custom image"}
    assert without.registries["/spec"] == ()

    offered = image_choices(ngc=True, registries=REGISTRIES)
    assert dict(offered.sources["/master/spec"]) == {
        "": "Custom image",
        "ngcCatalog": "Select from the NGC catalog",
        "ngcPrivateRegistry": "Select from the NGC private registry",
    }
    assert offered.registries["/spec"] == REGISTRIES


def test_the_registry_select_is_shown_only_with_registries_to_pick_from() -> None:
    def pointers(registries: tuple[tuple[str, str], ...]) -> set[str]:
        groups = environment_fields("/spec", registries=registries)
        return {f.pointer for g in groups for f in g.fields}

    assert "/spec/imageRegistryId" not in pointers(())
    assert "/spec/imageRegistryId" in pointers(REGISTRIES)
    image = environment_fields("/spec", registries=REGISTRIES)[0]
    registry = next(f for f in image.fields if f.pointer == "/spec/imageRegistryId")
    assert registry.label == "Registry"
    assert registry.options == (("", "None"), *REGISTRIES)
