
namespace MuxWatch.Model;

/// <summary>How firmly the evidence holds the primary cause.</summary>
public enum DiagnosisConfidence
{
    /// <summary>Only weak signs, or several of equal strength: a reading to confirm.</summary>
    Low,

    /// <summary>A clear sign, or a strong one shared with another cause.</summary>
    Medium,

    /// <summary>One strong sign with nothing as strong beside it.</summary>
    High,
}
