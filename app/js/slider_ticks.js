// Tick labels of the two log-scale sliders (app/views/controls.py), CustomJSTickFormatter
// bodies: `tick` is the slider's own value, log10 of the temperature or log2 of d_k.
// @script temperature
return (10 ** tick).toPrecision(3)
// @script d_k
return Math.round(2 ** tick).toString()
