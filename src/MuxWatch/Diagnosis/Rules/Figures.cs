using System.Globalization;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>How the rules write numbers in evidence: invariant, at most two decimals.</summary>
internal static class Figures
{
    public static string Format(double value) => value.ToString("0.##", CultureInfo.InvariantCulture);
}
