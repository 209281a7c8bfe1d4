namespace MuxWatch.Model;

/// <summary>What one piece of evidence is to its diagnosis.</summary>
public enum EvidenceRole
{
    /// <summary>A sign of its cause, from the message, MuxWatch's samples or the server's timeline.</summary>
    Finding,

    /// <summary>A server event that ran over the wait but did not decide the cause.</summary>
    Contributing,

    /// <summary>A sign the server's blocking explains: the client gave up on its connection, continuations piled up.</summary>
    Consequence,

    /// <summary>Why the primary cause won over the others present.</summary>
    Why,

    /// <summary>How the message was read (its client generation), or that nothing decided it.</summary>
    Note,
}
