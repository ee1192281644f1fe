"""The maps as methods of a model: the binding model and SmolLM2 inherit `Maps`, which runs
the model and hands its runs to the map builders (causal.py's ablation and patching maps,
attribution.py's one-backward estimate)."""

from __future__ import annotations

from .attribution import attribution_map
from .causal import CausalMap, causal_map, check_positions, patched_output, patching_map
from .edits import PatchHead


class Maps:
    """The maps as methods of a model (the binding model and SmolLM2 inherit this)."""

    def causal_map(
        self, text: str, token=None, answer=None, *, query=None, backend="numpy", **options
    ) -> CausalMap:
        """`causal_map` of ``text`` run with no edits (see there for the options)."""
        return causal_map(self.run(text, query=query, backend=backend), token, answer, **options)

    def patching_map(self, clean: str, corrupted: str, *, backend="numpy", **options):
        """`patching_map` of two texts of the same length."""
        run = self.run
        return patching_map(run(clean, backend=backend), run(corrupted, backend=backend), **options)

    def attribution_map(
        self,
        text: str,
        answer=None,
        corrupted: str | None = None,
        *,
        query=None,
        verify: int = 10,
        backend="numpy",
        **options,
    ):
        """`attribution.attribution_map` of ``text`` (and of the same-length ``corrupted`` text
        when given), run with no edits: every head's causal effect, or patching share,
        estimated from one backward pass, the ``verify`` largest measured exactly."""
        clean = self.run(text, query=query, backend=backend)
        bad = None if corrupted is None else self.run(corrupted, query=query, backend=backend)
        return attribution_map(clean, answer, bad, verify=verify, **options)

    def patch(self, clean: str, corrupted: str, layer: int, head: int, *, positions=None):
        """The corrupted text's run with head (layer, head)'s output taken from the clean run
        (at ``positions``, as `patching_map` takes them; default every position)."""
        source = self.run(clean)
        target = self.run(corrupted)
        if len(source.ids) != len(target.ids):
            raise ValueError(
                f"the clean text is {len(source.ids)} tokens and the corrupted "
                f"{len(target.ids)}: activation patching needs texts of the same length"
            )
        at = check_positions(target, positions)
        return target.intervene(
            PatchHead(layer, head, patched_output(source, target, layer, head, at))
        )
