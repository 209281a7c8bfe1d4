using MuxWatch.Model;

namespace MuxWatch.Diagnosis.Rules;

/// <summary>What the rules found so far: each cause's evidence and its heaviest weight.</summary>
internal sealed class Findings
{
    private readonly Dictionary<TimeoutCause, (EvidenceWeight Weight, List<Evidence> Evidence)> _byCause = [];

    /// <summary>The causes found, in the order first found.</summary>
    public IEnumerable<TimeoutCause> Causes => _byCause.Keys;

    /// <summary>How many causes were found.</summary>
    public int Count => _byCause.Count;

    /// <summary>Adds a finding for <paramref name="cause"/>, resting on <paramref name="fields"/>.</summary>
    public void Add(TimeoutCause cause, EvidenceWeight weight, string text, params string[] fields) =>
        Add(Evidence.Finding(cause, weight, text, fields));

    /// <summary>Adds one piece of evidence for its cause; the cause weighs as its heaviest.</summary>
    public void Add(Evidence evidence)
    {
        var cause = evidence.Cause ?? TimeoutCause.Unknown;
        if (!_byCause.TryGetValue(cause, out var entry))
        {
            entry = (evidence.Weight, []);
        }

        entry.Evidence.Add(evidence);
        _byCause[cause] = (evidence.Weight > entry.Weight ? evidence.Weight : entry.Weight, entry.Evidence);
    }

    /// <summary>True when <paramref name="cause"/> was found at least this heavy.</summary>
    public bool Has(TimeoutCause cause, EvidenceWeight atLeast = EvidenceWeight.Weak) =>
        _byCause.TryGetValue(cause, out var entry) && entry.Weight >= atLeast;

    /// <summary>The weight of <paramref name="cause"/>, <see cref="EvidenceWeight.None"/> when not found.</summary>
    public EvidenceWeight WeightOf(TimeoutCause cause) => _byCause.TryGetValue(cause, out var entry) ? entry.Weight : EvidenceWeight.None;

    /// <summary>The evidence for <paramref name="cause"/>, in the order found.</summary>
    public IReadOnlyList<Evidence> EvidenceOf(TimeoutCause cause) => _byCause.TryGetValue(cause, out var entry) ? entry.Evidence : [];
}
