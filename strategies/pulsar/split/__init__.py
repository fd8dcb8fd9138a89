"""Pulsar namespace bundle splitting.

* :mod:`.bundles` — bundle hash ranges, their names, the topic → bundle mapping (CRC32), the split of a range
  into children (``NamespaceBundleFactory``);
* :mod:`.algorithms` — the four split algorithms by their config names (``defaultNamespaceBundleSplitAlgorithm``);
* :mod:`.auto_split` — the modular load manager's decision of which bundles to split (``BundleSplitterTask``,
  ``checkNamespaceBundleSplit``).
"""
