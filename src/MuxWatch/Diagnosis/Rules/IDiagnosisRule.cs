namespace MuxWatch.Diagnosis.Rules;

/// <summary>One rule of docs/diagnosis.md: reads the input and adds what it finds.</summary>
/// <remarks>Rules run in <c>TimeoutDiagnoser.Rules</c>' order; a later rule may read what earlier ones found.</remarks>
internal interface IDiagnosisRule
{
    /// <summary>Adds this rule's findings to <paramref name="found"/>.</summary>
    void Apply(DiagnosisInput input, Findings found);
}
