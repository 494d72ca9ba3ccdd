"""Topics for the simulated demo's texts: Humanities, Language, Culture and History.

One topic per record: its subject (a singular noun phrase, so "it" can refer back to it), then
four facts as predicates that complete a sentence about it, the first one a definition. Lines
starting with "|" continue the record above. The facts are meant to be right: reference answers
and high-scored responses state them as true.
"""

from __future__ import annotations

HUMANITIES = """
the trolley problem | contrasts diverting a harm with directly causing it
| is used to test utilitarian and deontological intuitions | was introduced by Philippa Foot in 1967
| has variants such as the footbridge case, where most people refuse to push
Plato's allegory of the cave | compares ordinary perception to watching shadows on a wall
| appears in Book VII of the Republic | describes education as turning the soul toward the light
| links knowledge of the Good to fitness to rule
Kant's categorical imperative
| asks whether the maxim of an action could be willed as a universal law
| forbids treating people merely as means | binds every rational agent regardless of desires
| differs from hypothetical imperatives, which depend on an agent's goals
utilitarianism | judges actions by their consequences for overall well-being
| was developed by Jeremy Bentham and John Stuart Mill | comes in act and rule versions
| faces objections about justice and individual rights
existentialism | holds that existence precedes essence
| stresses freedom and responsibility for one's choices
| is associated with Sartre, de Beauvoir and Camus | treats anxiety as a sign of that freedom
the Italian Renaissance | revived interest in classical Greek and Roman learning
| produced linear perspective in painting | was funded in part by patrons such as the Medici
| spread humanist education across Europe
Shakespeare's Hamlet | follows a prince who delays avenging his father's murder
| contains the soliloquy that begins 'To be, or not to be'
| uses a play within the play to test the king's guilt
| ends with the deaths of most main characters
the stream-of-consciousness technique | renders a character's thoughts as they occur
| is central to Woolf's Mrs Dalloway and Joyce's Ulysses
| often drops conventional punctuation and sequence
| asks the reader to infer events from impressions
Stoicism | teaches that virtue is the only true good
| separates what is in our control from what is not
| was practised by Epictetus, Seneca and Marcus Aurelius
| recommends examining our judgments rather than the events themselves
the Socratic method | proceeds by questions and answers rather than lectures
| exposes contradictions in a person's beliefs | runs through Plato's early dialogues
| is still used in law-school teaching
Impressionism | sought to capture light and passing impressions in paint
| took its name from Monet's Impression, Sunrise
| favoured painting outdoors with visible brushstrokes | was at first rejected by the Paris Salon
the problem of free will | asks whether choices can be free if every event has a prior cause
| divides thinkers into compatibilists and incompatibilists
| bears on moral responsibility and punishment | has been revisited in light of neuroscience
the tragic hero of Greek drama | falls through an error of judgment that Aristotle called hamartia
| arouses pity and fear in the audience | is exemplified by Sophocles' Oedipus
| ends in a reversal of fortune followed by recognition
Confucian ethics | centres on cultivating virtue through relationships
| values filial piety and ritual propriety | is recorded mainly in the Analects
| holds up the junzi, the exemplary person, as a model
the epic poem | narrates heroic deeds at length in an elevated style | often begins in medias res
| includes works such as the Odyssey and the Epic of Gilgamesh
| grew out of oral storytelling traditions
"""

LANGUAGE = """
the passive voice | makes the receiver of an action the grammatical subject
| is formed with a form of 'be' and a past participle
| is useful when the actor is unknown or unimportant | can make writing vague when overused
the subjunctive mood | expresses wishes, hypotheses and demands
| survives in English in forms like 'if I were' | is far more common in Spanish and French
| is often replaced by the indicative in casual speech
a false friend | is a word that looks like one in another language but means something else
| includes Spanish 'embarazada', which means pregnant, not embarrassed
| trips up learners and translators | arises from shared roots whose meanings drifted apart
the Oxford comma | is the comma before 'and' at the end of a list
| can prevent ambiguity in lists of names | is required by some style guides and omitted by others
| is also called the serial comma
code-switching | means alternating between languages or varieties in one conversation
| often signals identity or group membership
| follows grammatical constraints rather than happening at random
| is common in bilingual communities
the Great Vowel Shift | changed how English long vowels were pronounced between about 1400 and 1700
| explains why English spelling and pronunciation often disagree
| moved the vowel of 'bite' from a sound like 'beet' to its modern form
| happened while spelling was beginning to settle
the metaphor | describes one thing as if it were another
| differs from a simile, which uses 'like' or 'as'
| shapes everyday speech in phrases like 'time is money'
| can carry feeling more compactly than a literal statement
a tonal language | uses pitch to tell words apart | includes Mandarin, Yoruba and Vietnamese
| can turn one syllable into several different words
| is a challenge for speakers of non-tonal languages
the loanword | is a word borrowed from another language
| includes 'kindergarten' from German and 'tsunami' from Japanese
| often changes pronunciation to fit the borrowing language
| reflects contact through trade, conquest and culture
the difference between 'affect' and 'effect'
| is that 'affect' is usually a verb and 'effect' a noun
| has exceptions such as 'to effect change' | confuses even fluent writers
| can be remembered with the mnemonic 'affect is action'
register | is the level of formality a speaker chooses for a situation
| differs in vocabulary, contractions and sentence length
| is marked in grammar by languages with a T-V distinction, such as French 'tu' and 'vous'
| matters in emails to employers and teachers
the haiku | traditionally has three lines of five, seven and five syllables
| often contains a seasonal reference called a kigo
| comes from the Japanese tradition of Basho and Issa
| relies on a cutting word or pause to set two images side by side
the dangling modifier | attaches a descriptive phrase to the wrong noun
| produces sentences like 'Walking to school, the rain started'
| is fixed by naming the actor right after the phrase | is a favourite target of editing guides
child language acquisition | follows similar stages across languages
| moves from babbling to single words to short phrases
| relies heavily on hearing speech in interaction
| is faster before adolescence, especially for pronunciation
machine translation | converts text between languages automatically
| now relies mostly on neural networks trained on parallel texts
| struggles with idioms and low-resource languages
| benefits from human post-editing for important documents
"""

CULTURE = """
the Japanese tea ceremony | centres on preparing and serving powdered green tea, matcha
| reflects the principles of harmony, respect, purity and tranquillity
| was shaped by the tea master Sen no Rikyu | treats every gesture and utensil as meaningful
Diwali | is the Hindu festival of lights | celebrates the victory of light over darkness
| is marked by oil lamps, sweets and fireworks
| falls in October or November, following the lunar calendar
the Day of the Dead | honours deceased relatives in Mexico on the first days of November
| features home altars called ofrendas with photos, food and marigolds
| blends Indigenous and Catholic traditions | is on UNESCO's list of intangible cultural heritage
K-pop | is popular music from South Korea | is produced by agencies that train performers for years
| spread worldwide through social media and fan communities
| mixes pop, hip-hop and electronic styles with elaborate choreography
the Olympic movement | began with games in ancient Greece at Olympia
| was revived in 1896 by Pierre de Coubertin | alternates between summer and winter games
| uses five interlocking rings to stand for the participating continents
jazz | emerged in New Orleans in the early twentieth century
| draws on blues, ragtime and brass-band traditions | places improvisation at its centre
| produced figures such as Louis Armstrong and Miles Davis
Lunar New Year | marks the start of the lunisolar calendar in China and much of East Asia
| is associated with one of twelve zodiac animals each year
| involves family reunions, red envelopes and dumplings | falls between late January and February
tipping | varies widely between countries | is expected at 15 to 20 percent in US restaurants
| is often unnecessary in Japan, where service is included
| reflects how service wages are structured in each country
Bollywood | is the Hindi-language film industry based in Mumbai
| releases hundreds of films a year | is known for song-and-dance sequences
| draws on Hindi and Urdu and increasingly on English
Southeast Asian street food | centres on hawker stalls and night markets
| includes dishes like pad thai, banh mi and satay
| was recognised when Singapore's hawker culture joined UNESCO's list in 2020
| offers inexpensive meals cooked to order
the siesta | is a short afternoon rest traditional in Spain
| grew out of hot climates and long midday meals | is less common today in large cities
| still shapes late dinner times and shop hours
flamenco | is an art form from Andalusia in southern Spain
| combines singing, guitar playing, dance and handclaps
| reflects Romani, Moorish and Andalusian influences | joined UNESCO's heritage list in 2010
afternoon tea | was popularised in Britain by Anna, Duchess of Bedford, in the 1840s
| serves tea with sandwiches, scones and cakes
| is distinct from high tea, a heartier evening meal | survives as a custom for special occasions
Maasai culture | belongs to a semi-nomadic people of Kenya and Tanzania
| places cattle at the centre of wealth and diet | is known for age-set rituals and beadwork
| faces pressure from changes in land use
anime | refers to animation from Japan | covers every genre from comedy to science fiction
| often adapts manga | has a global fan culture of conventions and cosplay
the Rio Carnival | takes place in the days before Lent each year
| features samba schools that compete in parades | attracts millions of visitors
| blends European, African and Indigenous Brazilian traditions
"""

HISTORY = """
the fall of the Western Roman Empire
| is conventionally dated to 476, when Romulus Augustulus was deposed
| followed decades of economic strain and pressure from migrating peoples
| left the Eastern Empire to continue from Constantinople
| is explained by historians through many interacting causes
the printing press | was developed by Johannes Gutenberg around 1440
| made books far cheaper and faster to produce | helped spread the ideas of the Reformation
| raised literacy across Europe over the following centuries
the French Revolution | began in 1789 with the calling of the Estates-General
| abolished feudal privileges and proclaimed the Declaration of the Rights of Man
| went through a radical phase known as the Terror | ended with Napoleon's seizure of power in 1799
the Industrial Revolution | began in Britain in the late eighteenth century
| mechanised textile production and spread steam power
| drew workers from farms into growing cities | transformed living standards and working conditions
the Silk Road | was a network of trade routes linking China with the Mediterranean
| carried silk, spices, ideas and religions | helped spread diseases such as the plague
| flourished under the Han and Tang dynasties and the Mongol Empire
the Cold War | was a rivalry between the United States and the Soviet Union from about 1947 to 1991
| was fought through arms races, proxy wars and propaganda
| came close to nuclear war in the Cuban Missile Crisis of 1962
| ended with the dissolution of the Soviet Union
the Meiji Restoration | restored imperial rule in Japan in 1868 | ended the Tokugawa shogunate
| launched rapid industrialisation | reformed the army, schools and laws on Western models
the Black Death | swept across Europe between 1347 and 1351
| killed roughly a third to a half of Europe's population
| was caused by the bacterium Yersinia pestis
| led to labour shortages that raised wages for survivors
the American civil rights movement | fought segregation and discrimination against Black Americans
| gained momentum with the Montgomery bus boycott of 1955
| won the Civil Rights Act of 1964 and the Voting Rights Act of 1965
| relied largely on nonviolent protest
the Magna Carta | was sealed by King John of England in 1215 | placed the king under the law
| protected barons from arbitrary imprisonment
| later became a symbol of constitutional government
the Ottoman Empire | was founded around 1299 in Anatolia | captured Constantinople in 1453
| ruled much of southeastern Europe, the Middle East and North Africa at its height
| was dissolved after the First World War
the Apollo 11 mission | landed the first humans on the Moon in July 1969
| carried Neil Armstrong, Buzz Aldrin and Michael Collins | was a milestone of the space race
| brought lunar rock samples back to Earth
the Berlin Wall | was built in 1961 to stop East Germans from fleeing to the West
| divided the city for 28 years | fell on 9 November 1989
| symbolised the division of Europe during the Cold War
the Maya civilisation | flourished in Mesoamerica, especially between 250 and 900 CE
| developed a full writing system and a sophisticated calendar
| built cities such as Tikal and Palenque
| declined in the southern lowlands for reasons still debated
the partition of India | took place in 1947 at the end of British rule
| created the independent states of India and Pakistan
| displaced an estimated 10 to 20 million people | was accompanied by widespread communal violence
"""
