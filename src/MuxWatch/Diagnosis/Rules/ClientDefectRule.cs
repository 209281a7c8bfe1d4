using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// A known defect of the client version that wrote the message, with its symptom in the message:
/// the maintainers' answer is to upgrade (<see cref="ClientDefects"/>).
/// </summary>
internal sealed class ClientDefectRule : IDiagnosisRule
{
    /// <summary>
    /// The version a message without <c>v:</c> must come from when it carries <c>phys:</c>: the client printed the physical
    /// connection's state only from after 2.0.519 (its commit 4ae78480, "Perf regression (#1076)") to 2.0.588 (removed by
    /// 2876ed04, three commits after that tag), so the only releases that print it are 2.0.571 and 2.0.588. Read as 2.0.571, the
    /// older, with the defect; 2.0.588, which fixed it, is said beside it.
    /// </summary>
    private const string VersionPrintingPhys = "2.0.571";

    public void Apply(DiagnosisInput input, Findings found)
    {
        var report = input.Report;
        var version = report.Field("v")?.Raw;
        var fromPhys = version is null && report.Field("phys") is not null;
        if (ClientDefects.Of(fromPhys ? VersionPrintingPhys : version, report) is { } defect)
        {
            var which = fromPhys
                ? $"no v:, but phys: is printed only by 2.0.571 and 2.0.588 (the builds between 2.0.519 and 2.0.588): 2.0.571 has {defect.What}, fixed in {defect.FixedIn}"
                : $"v: {version} has {defect.What}, fixed in {defect.FixedIn}";
            found.Add(TimeoutCause.ClientDefect, EvidenceWeight.Strong,
                $"{which} ({defect.Source}); here {defect.SymptomText}: upgrade the client",
                fromPhys ? "phys" : "v", "qs", "qu");
        }
    }
}
