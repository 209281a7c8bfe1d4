namespace MuxWatch.Model;

/// <summary>
/// How much one cause's evidence weighs in a diagnosis: the primary cause is the heaviest, ties broken by
/// <c>TimeoutDiagnoser.PriorityOrder</c> (Diagnosis). The server correlation reads it to tell a cause with
/// evidence of its own from one that a server stall explains as well (docs/diagnosis.md).
/// </summary>
public enum EvidenceWeight
{
    /// <summary>No evidence for the cause.</summary>
    None = 0,

    /// <summary>Present but incidental: a byte or two unread, Busy one over Min, load that arose while the request waited.</summary>
    Weak = 1,

    /// <summary>A clear sign of the cause, which a server stall can still explain.</summary>
    Clear = 2,

    /// <summary>Conclusive on its own.</summary>
    Strong = 3,

    /// <summary>Strong starvation: it explains a lost heartbeat, a stuck reader and a stuck writer as well.</summary>
    Overriding = 4,

    /// <summary>A configuration failure (a refused password, an unresolvable name): no load causes it.</summary>
    Configuration = 5,
}
