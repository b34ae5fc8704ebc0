package weather

import kotlin.math.roundToInt

enum class Scale { CELSIUS, FAHRENHEIT }

data class Reading(val value: Double, val scale: Scale)

class Station(private val name: String) {
    private val readings = mutableListOf<Reading>()

    fun record(r: Reading) {
        readings += r
    }

    internal fun average(scale: Scale): Double {
        if (readings.isEmpty()) return Double.NaN
        return readings.map { convert(it, scale) }.average()
    }

    companion object {
        val DEFAULT = Station("default")
    }
}

fun convert(r: Reading, to: Scale): Double =
    when {
        r.scale == to -> r.value
        to == Scale.FAHRENHEIT -> r.value * 9 / 5 + 32
        else -> (r.value - 32) * 5 / 9
    }

private fun label(v: Double) = "${v.roundToInt()}°"
