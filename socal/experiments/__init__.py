"""The paper's experiments, one module each (imported on demand; not loaded by ``import socal``)."""
