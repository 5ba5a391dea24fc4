"""Rendering: the one renderer of results (text, HTML, mimebundles) and the network waterfall."""
