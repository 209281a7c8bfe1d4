using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>
/// A known defect of the client version that wrote the message, with its symptom in the message:
/// the maintainers' answer is to upgrade (<see cref="ClientDefects"/>).
/// </summary>
internal sealed class ClientDefectRule : IDiagnosisRule
{
    public void Apply(DiagnosisInput input, Findings found)
    {
        var version = input.Report.Field("v")?.Raw;
        if (ClientDefects.Of(version, input.Report) is { } defect)
        {
            found.Add(TimeoutCause.ClientDefect, EvidenceWeight.Strong,
                $"v: {version} has {defect.What}, fixed in {defect.FixedIn} ({defect.Source}); here {defect.SymptomText}: upgrade the client",
                "v", "qs", "qu");
        }
    }
}
