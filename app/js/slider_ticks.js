// Value readouts of the sliders (app/views/controls.py), CustomJSTickFormatter bodies: `tick`
// is the slider's own value (log10 of the temperature, log2 of d_k, the angle), `sign` the
// page's decimal sign ("." in English, Chinese and Arabic; "," in Spanish).
// @script temperature
return (10 ** tick).toPrecision(3).replace(".", sign)
// @script d_k
return Math.round(2 ** tick).toString()
// @script decimal
return String(Number(tick.toFixed(2))).replace(".", sign)
